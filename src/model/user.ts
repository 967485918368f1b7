// Users (tenants) and their API keys. Keys are random, shown once and stored only as a hash.
import { createHash, randomBytes } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { Timestamp } from './common.ts';

export const Limits = Type.Object({
  max_domains: Type.Integer(),
  max_records_per_domain: Type.Integer(),
  max_iplists: Type.Integer(),
  max_ips_per_list: Type.Integer(),
});
export type Limits = Static<typeof Limits>;

export const DEFAULT_LIMITS: Limits = {
  max_domains: 1000,
  max_records_per_domain: 1000,
  max_iplists: 100,
  max_ips_per_list: 10_000,
};

export interface UserState {
  id: number;
  name: string;
  email: string;
  created: string;
  limits: Limits;
  /** Marked by the operator: may register the service's reserved zones (PALISADE_RESERVED_ZONES). */
  reservedZones?: boolean;
  /** Disabled by the operator: its keys are refused (401) until enabled again. Data stays. */
  disabled?: boolean;
  /** The account's pair of name servers from the pool (issue 26), assigned at first need. */
  nameservers?: [string, string];
}

export interface ApiKeyState {
  id: number;
  userId: number;
  /** hex SHA-256 of the key: keys are 256-bit random, so a fast hash is enough. */
  hash: string;
  label: string;
  created: string;
  revoked: string | null;
}

export const Me = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  created: Timestamp,
  limits: Limits,
  usage: Type.Object({ domains: Type.Integer(), iplists: Type.Integer() }),
  nameservers: Type.Array(Type.String(), { description: "The account's pair of name servers: delegate your domains to these (a domain shows its own pair: another, when the name was once delegated to this pair for another account)" }),
}, { examples: [{ id: 1, name: 'alice', email: 'alice@example.org', created: '2026-11-23T09:00:00.000Z', limits: { max_domains: 1000, max_records_per_domain: 1000, max_iplists: 100, max_ips_per_list: 10000 }, usage: { domains: 1, iplists: 0 }, nameservers: ['ns1.palisade.example.net', 'ns2.palisade.example.net'] }] });

/** A new key: "pk_" + 43 base64url characters (256 bits). */
export function generateApiKey(): string {
  return `pk_${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
