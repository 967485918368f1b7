// The writes that make a name server rebuild the worst zones, as a customer or the operator
// makes them: each zone stored whole in one commit (beside the running server, as an import
// would), then changed through the API (a PATCH, a record POST, a record-list read).
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { generateApiKey, hashApiKey } from '../../src/model/user.ts';
import type { Store } from '../../src/store/types.ts';
import type { WorstZone } from './worst-zones.ts';

/**
 * The two tenants: one that will write the worst zones (its record limit raised to `records`),
 * and another with one served zone, other.example, whose answers are timed.
 */
export async function seedTenants(store: Store, records: number): Promise<{ ownerId: number; ownerKey: string; otherKey: string }> {
  const owner = await store.createUser({ name: 'big', email: 'big@example.org', limits: { max_records_per_domain: records + 10 } });
  const ownerKey = generateApiKey();
  await store.addApiKey(owner.id, hashApiKey(ownerKey), 'stall');
  const other = await store.createUser({ name: 'other', email: 'other@example.org' });
  const otherKey = generateApiKey();
  await store.addApiKey(other.id, hashApiKey(otherKey), 'stall');
  await store.createZone((c) => ({
    domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: 'other.example', ownerId: other.id, ns_active: true, created: c.now, updated: c.now, revision: 0, enabled: false },
    records: [],
  }));
  return { ownerId: owner.id, ownerKey, otherKey };
}

export async function writeWorstZones(store: Store, ownerId: number, zones: WorstZone[], apexOf: (label: string) => string): Promise<void> {
  for (const worst of zones) {
    const apex = apexOf(worst.label);
    await store.createZone((ctx) => ({
      domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: apex, ownerId, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0, mask: worst.mask ?? 'www' },
      records: [],
    }));
    // All its records in one change, one revision: a bulk write is applied in one step.
    await store.changeRecords(apex, ownerId, (_zone, ctx) => ({ put: worst.records.map((r) => ({ ...r, id: ctx.nextRecordId() })), del: [] }));
  }
}

export async function changeThroughApi(apiUrl: string, key: string, zones: WorstZone[], apexOf: (label: string) => string): Promise<void> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(apiUrl + path, {
      method,
      headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status >= 500) throw new Error(`${method} ${path}: ${res.status}`);
  };
  for (const worst of zones) {
    const apex = apexOf(worst.label);
    await call('PATCH', `/domains/${apex}`, { cachelevel: 2 });
    await call('POST', `/domains/${apex}/dnsrecords`, { name: 'extra', type: 6, value: 'one more' });
    await call('GET', `/domains/${apex}/dnsrecords?limit=1000`);
    await call('GET', `/domains/${apex}`);
  }
}
