// The differences IXFR sends (RFC 1995), kept from the index's record patches: for each change
// of a zone, the records removed and added at the names the patch rebuilt, between the serials it
// went from and to. A zone built whole (a settings or node change, a load) starts its history
// again; a secondary asking from a serial no longer held gets the whole zone. Bounded: at most
// MAX_STEPS changes per zone and MAX_RECORDS records in all (the oldest histories go first).
import { QTYPE } from '../wire/constants.ts';
import type { NameNode, RData, RRset, ZoneData } from '../zone/types.ts';

const MAX_STEPS = 256;
const MAX_RECORDS = 1_000_000;

export interface JournalStep {
  from: number;
  to: number;
  fromSoa: RRset;
  toSoa: RRset;
  removed: RRset[];
  added: RRset[];
  records: number;
}

const keyOf = (set: RRset, r: RData) => `${set.name}\n${set.type}\n${set.ttl}\n${JSON.stringify(r)}`;

/** Each RR a name serves to a client anywhere (the general variants), but the SOA, by key. */
function rrsOf(node: NameNode | undefined): Map<string, RRset> {
  const out = new Map<string, RRset>();
  for (const set of node ?? []) {
    if (set.type === QTYPE.SOA) continue;
    for (const r of set.rdata) out.set(keyOf(set, r), { name: set.name, type: set.type, ttl: set.ttl, rdata: [r] });
  }
  return out;
}

export class IxfrJournal {
  private readonly zones = new Map<string, JournalStep[]>();
  private records = 0;

  /** A zone swapped in or gone; `before`: the names a patch rebuilt, as they were (absent: built whole). */
  record(name: string, zone: ZoneData | undefined, previousSerial: number | undefined, previousSoa: RRset | undefined, before?: ReadonlyMap<string, NameNode | undefined>): void {
    if (!zone || !before || previousSerial === undefined || !previousSoa) return this.forget(name);
    if (zone.serial === previousSerial) return;
    const removed: RRset[] = [];
    const added: RRset[] = [];
    for (const [owner, old] of before) {
      const was = rrsOf(old);
      const now = rrsOf(zone.nodes.get(owner));
      for (const [key, rr] of was) if (!now.has(key)) removed.push(rr);
      for (const [key, rr] of now) if (!was.has(key)) added.push(rr);
    }
    const steps = this.zones.get(name) ?? [];
    // Steps must chain: a gap (a change not seen as a patch) starts the history again.
    if (steps.length > 0 && steps.at(-1)!.to !== previousSerial) this.forget(name);
    const list = this.zones.get(name) ?? [];
    const step: JournalStep = { from: previousSerial, to: zone.serial, fromSoa: previousSoa, toSoa: zone.soa, removed, added, records: removed.length + added.length + 2 };
    list.push(step);
    this.records += step.records;
    if (list.length > MAX_STEPS) this.records -= list.shift()!.records;
    // Re-inserted: the map's order is least recently changed first, what goes first past the bound.
    this.zones.delete(name);
    this.zones.set(name, list);
    while (this.records > MAX_RECORDS && this.zones.size > 0) this.forget(this.zones.keys().next().value!);
  }

  forget(name: string): void {
    const steps = this.zones.get(name);
    if (!steps) return;
    for (const s of steps) this.records -= s.records;
    this.zones.delete(name);
  }

  /** The steps from `serial` to `current`, or undefined when that history is not held. */
  since(name: string, serial: number, current: number): JournalStep[] | undefined {
    const steps = this.zones.get(name);
    if (!steps || steps.at(-1)?.to !== current) return undefined;
    const at = steps.findIndex((s) => s.from === serial);
    return at === -1 ? undefined : steps.slice(at);
  }

  get size(): number {
    return this.records;
  }
}
