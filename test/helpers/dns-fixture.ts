// Zones for DNS tests, in the store's model, built from zones-fixtures/ so tests and benchmarks
// share one picture of a realistic zone.
import { readFileSync } from 'node:fs';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';
import type { EdgeNode } from '../../src/model/node.ts';
import { buildRecord, type RecordCreate, type RecordState } from '../../src/model/record.ts';
import { ZoneIndex } from '../../src/dns/zone/index.ts';
import type { RData } from '../../src/dns/zone/types.ts';
import type { FieldError } from '../../src/errors.ts';
import type { Zone } from '../../src/store/types.ts';

export const NAMESERVERS = ['ns1.example.net', 'ns2.example.net'] as const;
export const HOSTMASTER = 'hostmaster.example.net';

export function makeZone(domain: Partial<DomainState> & { domain: string }, records: RecordCreate[], revision = 1): Zone {
  const errors: FieldError[] = [];
  const built: RecordState[] = records.map((r, i) => buildRecord(r, i + 1, domain.domain, errors));
  if (errors.length > 0) throw new Error(`fixture record invalid: ${JSON.stringify(errors)}`);
  return {
    domain: {
      ...DOMAIN_DEFAULTS,
      backend: '198.51.100.1',
      ownerId: 1,
      ns_active: true,
      created: '2026-01-01T00:00:00.000Z',
      updated: '2026-01-01T00:00:00.000Z',
      revision,
      ...domain,
    },
    records: built,
  };
}

export function fixtureZone(file = 'example.org.json', overrides: Partial<DomainState> = {}): Zone {
  const json = JSON.parse(readFileSync(new URL(`../../zones-fixtures/${file}`, import.meta.url), 'utf8')) as {
    domain: Partial<DomainState> & { domain: string };
    records: RecordCreate[];
  };
  return makeZone({ ...json.domain, ...overrides }, json.records);
}

export const EDGE_NODES: EdgeNode[] = [
  { id: 1, name: 'fra1', ipv4: '192.0.2.101', ipv6: '2001:db8::101', location: 'DE', status: 'active' },
  { id: 2, name: 'nyc1', ipv4: '192.0.2.102', ipv6: null, location: 'US', status: 'active' },
  { id: 3, name: 'old1', ipv4: '192.0.2.103', ipv6: null, location: 'FR', status: 'disabled' },
];

export function indexWith(zones: Zone[], nodes: EdgeNode[] = EDGE_NODES, nodesRevision = 1): ZoneIndex {
  const index = new ZoneIndex({ nameservers: NAMESERVERS, hostmaster: HOSTMASTER });
  index.replaceAll(zones, nodes, nodesRevision);
  return index;
}

/** An A or AAAA record's address as text ("192.0.2.1"; IPv6 as its 16 octets joined by ","). */
export function addressOf(r: RData): string {
  if (r.type === 1) return [24, 16, 8, 0].map((shift) => (r.address >>> shift) & 255).join('.');
  if (r.type === 28) return [...r.address].join(',');
  throw new Error(`not an address record: type ${r.type}`);
}
