// Edge nodes: registered by the operator, listed to customers, referenced by domains
// (`bind_node`) and IP lists (`nodes`).
import { Type, type Static } from 'typebox';
import type { FieldError } from '../errors.ts';
import { countryByIsoCode } from './geo-targets.ts';
import { Nullable } from './common.ts';
import { canonicalIp } from './ip.ts';

export const NODE_STATUSES = ['active', 'maintenance', 'disabled'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export const EdgeNode = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  ipv4: Nullable(Type.String()),
  ipv6: Nullable(Type.String()),
  location: Type.String({ description: 'ISO 3166-1 alpha-2 country code' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('maintenance'), Type.Literal('disabled')]),
}, { examples: [{ id: 1, name: 'fra1', ipv4: '192.0.2.10', ipv6: '2001:db8::10', location: 'DE', status: 'active' }] });
export type EdgeNode = Static<typeof EdgeNode>;

/** Validates an operator's node fields; both addresses are optional but one is required. */
export function checkNode(node: EdgeNode): FieldError[] {
  const errors: FieldError[] = [];
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(node.name)) errors.push({ field: 'name', message: 'must be 1–63 letters, digits, ".", "_" or "-"' });
  if (node.ipv4 !== null && canonicalIp(node.ipv4)?.family !== 4) errors.push({ field: 'ipv4', message: `"${node.ipv4}" is not an IPv4 address` });
  if (node.ipv6 !== null && canonicalIp(node.ipv6)?.family !== 6) errors.push({ field: 'ipv6', message: `"${node.ipv6}" is not an IPv6 address` });
  if (node.ipv4 === null && node.ipv6 === null) errors.push({ field: 'ipv4', message: 'a node needs an IPv4 or an IPv6 address' });
  if (!countryByIsoCode(node.location)) errors.push({ field: 'location', message: `"${node.location}" is not an ISO 3166-1 alpha-2 country code` });
  if (!NODE_STATUSES.includes(node.status)) errors.push({ field: 'status', message: `must be one of ${NODE_STATUSES.join(', ')}` });
  return errors;
}

export function canonicalNode(node: EdgeNode): EdgeNode {
  return {
    ...node,
    ipv4: node.ipv4 === null ? null : canonicalIp(node.ipv4)!.address,
    ipv6: node.ipv6 === null ? null : canonicalIp(node.ipv6)!.address,
    location: node.location.toUpperCase(),
  };
}
