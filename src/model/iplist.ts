// The IP list resource: named sets of addresses and CIDR prefixes the edge nodes act on.
import { Type, type Static } from 'typebox';
import type { FieldError } from '../errors.ts';
import { EXPECTED, NodeIds, Revision, Timestamp } from './common.ts';
import { canonicalIpOrPrefix } from './ip.ts';

const IpOrPrefix = Type.String({ minLength: 2, maxLength: 49, description: 'IPv4/IPv6 address or CIDR prefix' });
const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\x00-\\x1f\\x7f]+$', [EXPECTED]: 'a name of 1–100 characters without control characters' }),
  ips: Type.Array(IpOrPrefix, { maxItems: 100_000 }),
  allnodes: Type.Boolean({ description: 'Applies on every edge node (default true); otherwise only on `nodes`' }),
  nodes: NodeIds,
};

export const IpListCreate = Type.Object(
  { name: fields.name, ips: Type.Optional(fields.ips), allnodes: Type.Optional(fields.allnodes), nodes: Type.Optional(fields.nodes) },
  { additionalProperties: false },
);
export type IpListCreate = Static<typeof IpListCreate>;

export const IpListPatch = Type.Object(
  { name: Type.Optional(fields.name), ips: Type.Optional(fields.ips), allnodes: Type.Optional(fields.allnodes), nodes: Type.Optional(fields.nodes) },
  { additionalProperties: false },
);
export type IpListPatch = Static<typeof IpListPatch>;

export const IpList = Type.Object({
  id: Type.Integer(),
  ...fields,
  created: Timestamp,
  updated: Timestamp,
  revision: Revision,
}, { examples: [{ id: 3, name: 'office', ips: ['192.0.2.0/24', '2001:db8::7'], allnodes: true, nodes: [], created: '2026-11-23T09:00:00.000Z', updated: '2026-11-23T09:00:00.000Z', revision: 43 }] });
export type IpList = Static<typeof IpList>;

export interface IpListState extends IpList {
  ownerId: number;
}

/** Canonical, deduplicated, sorted entries; every bad entry is reported with its index. */
export function canonicalIpEntries(ips: readonly string[], errors: FieldError[], field = 'ips'): string[] {
  const out = new Set<string>();
  ips.forEach((ip, i) => {
    const entry = canonicalIpOrPrefix(ip);
    if ('error' in entry) errors.push({ field: `${field}.${i}`, message: entry.error });
    else out.add(entry.value);
  });
  return [...out].sort();
}

/** Where `entry` is or would go in sorted `entries` (code-unit order, as Array.sort). */
export function sortedIndex(entries: readonly string[], entry: string): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (entries[middle]! < entry) low = middle + 1;
    else high = middle;
  }
  return low;
}
