// A pure function's results remembered by their key, for values that repeat on every request (a
// domain's backend text, a client's address, a Host header). Bounded: when `max` keys are held
// the memo starts again empty — keys an attacker varies only cost a recomputation each, never
// memory. Undefined results are remembered too.
export function boundedMemo<K, V>(compute: (key: K) => V, max: number): (key: K) => V {
  const memo = new Map<K, V>();
  return (key: K): V => {
    let value = memo.get(key);
    if (value === undefined && !memo.has(key)) {
      if (memo.size >= max) memo.clear();
      value = compute(key);
      memo.set(key, value);
    }
    return value as V;
  };
}
