// A built zone's served content in a form that ignores the order records arrived in: what tests
// compare a zone patched or fed change by change with against a zone built whole.
import type { RData, RRset, ZoneData } from '../../src/dns/zone/types.ts';

const rdataKey = (r: RData) => JSON.stringify(r, (_k, v: unknown) => (Buffer.isBuffer(v) || (v as { type?: string })?.type === 'Buffer' ? Buffer.from(v as Buffer).toString('hex') : v));
// A general set that holds nothing (the name has only geo variants of the type) answers nothing: its TTL is moot.
const setForm = (set: RRset) => ({ name: set.name, type: set.type, ttl: set.rdata.length === 0 ? 0 : set.ttl, rdata: set.rdata.map(rdataKey).sort() });

export function servedForm(zone: ZoneData) {
  const nodes = [...zone.nodes.entries()]
    .map(([name, node]) => [
      name,
      [...node]
        .sort((a, b) => a.type - b.type)
        .map((set) => ({ ...setForm(set), byTarget: set.byTarget ? [...set.byTarget.entries()].sort((a, b) => a[0] - b[0]).map(([t, v]) => [t, setForm(v)]) : [] })),
    ])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return { nodes, ents: [...zone.ents].sort(), cuts: [...zone.cuts].sort(), soa: setForm(zone.soa), serial: zone.serial, negativeTtl: zone.negativeTtl };
}
