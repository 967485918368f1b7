// The log of refused transfers and TSIG failures: a line per client per minute, the rest counted
// and told once the minute is over; a flood from many addresses costs a bounded number of lines.
import { describe, expect, it } from 'vitest';
import { RefusalLog, WINDOW_MS, type RefusalLine } from '../../../src/dns/transfer/refusal-log.ts';

function logWithClock() {
  const lines: RefusalLine[] = [];
  let now = 1_000_000;
  const log = new RefusalLog((line) => lines.push(line), () => now);
  return { log, lines, advance: (ms: number) => (now += ms) };
}

describe('refusal log', () => {
  it('one line for the first refusal of a client, one with the counts once its minute is over', () => {
    const { log, lines, advance } = logWithClock();
    log.note({ client: '192.0.2.1', kind: 'tsig', reason: 'BADSIG', key: 'k', zone: 'a.example' });
    for (let i = 0; i < 9; i++) log.note({ client: '192.0.2.1', kind: i % 2 ? 'tsig' : 'refused', reason: 'x' });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toMatch(/TSIG check failed/);
    expect(lines[0]!.fields).toMatchObject({ client: '192.0.2.1', reason: 'BADSIG', key: 'k', zone: 'a.example' });
    advance(WINDOW_MS - 1);
    log.flush();
    expect(lines).toHaveLength(1);
    advance(1);
    log.flush();
    expect(lines).toHaveLength(2);
    expect(lines[1]!.fields).toEqual({ client: '192.0.2.1', refused: 5, tsigFailures: 4 });
    // A quiet minute after that: nothing more; a new refusal: a new first line.
    advance(WINDOW_MS);
    log.flush();
    expect(lines).toHaveLength(2);
    log.note({ client: '192.0.2.1', kind: 'refused', reason: 'not over TCP' });
    expect(lines).toHaveLength(3);
    expect(lines[2]!.message).toMatch(/zone transfer refused/);
  });

  it('a flood from many addresses: at most 100 first lines a minute, the rest told as one count', () => {
    const { log, lines, advance } = logWithClock();
    for (let i = 0; i < 50_000; i++) log.note({ client: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, kind: 'refused', reason: 'not signed (TSIG)' });
    expect(lines).toHaveLength(100);
    advance(WINDOW_MS);
    log.flush();
    expect(lines.length).toBe(101);
    expect(lines.at(-1)!.fields).toEqual({ refused: 49_900, tsigFailures: 0 });
  });
});
