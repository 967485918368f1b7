// Seeds an embedded store for the change-cost benchmark, in its own process (the benchmark's own
// stays small): for one account, served zones of 20, 20,000 and 200,000 records, and IP lists
// of 0 and 10,000 entries.
//   node --import tsx bench/change-cost/seed.ts DIR USER_ID
import { openStore } from '../../src/store/index.ts';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import type { RecordState } from '../../src/model/record.ts';

const [dir, userArg] = process.argv.slice(2);
if (!dir || !userArg) throw new Error('usage: seed.ts DIR USER_ID');
const ownerId = Number(userArg);
const store = openStore({ dataDir: dir });
for (const [name, size] of [['small.example', 20], ['big.example', 20_000], ['huge.example', 200_000]] as const) {
  await store.createZone((ctx) => ({
    domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', enabled: false, domain: name, ownerId, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
    records: Array.from({ length: size }, (_, i): RecordState => ({ id: ctx.nextRecordId(), name: `h${i}`, type: 1, value: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, ttl: 300, priority: null, target: [] })),
  }));
}
for (const [name, size] of [['empty', 0], ['full', 10_000]] as const) {
  const ips = Array.from({ length: size }, (_, i) => `172.${16 + ((i >> 16) & 15)}.${(i >> 8) & 255}.${i & 255}`).sort();
  await store.createIpList((ctx) => ({ id: ctx.id, ownerId, name, ips, allnodes: true, nodes: [], created: ctx.now, updated: ctx.now, revision: 0 }));
}
await store.close();
