// Seeds an embedded store with N served zones × 20 records, in its own process so that the
// benchmark process stays small and idle while name servers are measured.
//   node --import tsx bench/sync/seed-store.ts DIR N
import { openStore } from '../../src/store/index.ts';
import { workloadZones } from '../dns/workload.ts';

const [dir, count] = process.argv.slice(2);
if (!dir || !count) throw new Error('usage: seed-store.ts DIR N');
const zonesCount = Number(count);
const store = openStore({ dataDir: dir });
const user = await store.createUser({ name: 'bench', email: 'bench@example.org', limits: { max_domains: zonesCount } });
const zones = workloadZones(zonesCount);
for (let i = 0; i < zones.length; i += 1000) {
  await Promise.all(zones.slice(i, i + 1000).map((z) => store.createZone(() => ({ ...z, domain: { ...z.domain, ownerId: user.id } }))));
}
await store.close();
