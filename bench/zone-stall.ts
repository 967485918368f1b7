// Event-loop stalls from the largest zones the limits allow.
//   npm run bench:zone-stall                  (1,000 records per zone: the default account limit)
//   BENCH_RECORDS=20000 npm run bench:zone-stall
// Part 1 times each synchronous step a name server and the API take per zone, in this process.
// Part 2 runs `palisade serve` as shipped, writes the worst zones beside it and through its API,
// and reports the longest wait another tenant's DNS queries and API reads saw meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildZone } from '../src/dns/zone/build.ts';
import { ZoneIndex } from '../src/dns/zone/index.ts';
import { answer } from '../src/dns/engine/answer.ts';
import { DOMAIN_DEFAULTS } from '../src/model/domain.ts';
import { checkRecordInZone, renderRecord } from '../src/model/record.ts';
import { EmbeddedStore } from '../src/store/lmdb/index.ts';
import type { Zone } from '../src/store/types.ts';
import { startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { startProbe } from './zone-stall/probe.ts';
import { changeThroughApi, seedTenants, writeWorstZones } from './zone-stall/run-writes.ts';
import { worstZones } from './zone-stall/worst-zones.ts';

const LIMIT = Number(process.env.BENCH_RECORDS ?? 1000);
const apexOf = (label: string) => `${label}.stall.example`;
const zones = worstZones(LIMIT, apexOf);
const ctx = { nameservers: ['ns1.example.net', 'ns2.example.net'] as const, hostmaster: 'hostmaster.example.net', nodes: [], nodesRevision: 0 };
const time = (fn: () => unknown) => {
  const at = performance.now();
  fn();
  return performance.now() - at;
};

console.log(`worst zones at ${LIMIT} records each (synchronous steps, ms):`);
console.log('  zone                        JSON MB  build  stringify  parse  check+1  render  answer');
let longest = 0;
function measure(worst: (typeof zones)[number]) {
  const zone: Zone = {
    domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: apexOf(worst.label), ownerId: 1, ns_active: true, created: '', updated: '', revision: 1, mask: worst.mask ?? 'www' },
    records: worst.records,
  };
  let text = '';
  const steps = {
    build: time(() => buildZone(zone, ctx)),
    stringify: time(() => (text = JSON.stringify(zone))),
    parse: time(() => JSON.parse(text)),
    check: time(() => checkRecordInZone({ ...worst.records[0]!, id: 0, value: `${worst.records[0]!.value}-new` }, zone.records)),
    render: time(() => JSON.stringify(zone.records.map(renderRecord))),
    answer: 0,
  };
  const index = new ZoneIndex(ctx);
  index.replaceAll([zone], [], 0);
  steps.answer = time(() => answer(index, { qname: `${worst.bigName}.${zone.domain.domain}`, qtype: worst.bigType }, {}));
  return { steps, megabytes: text.length / 1e6 };
}

// Each zone is measured twice and the second, warmed-up run printed: a server builds zones all day.
for (const worst of zones) measure(worst);
for (const worst of zones) {
  const { steps, megabytes } = measure(worst);
  longest = Math.max(longest, ...Object.values(steps));
  const f = (n: number) => n.toFixed(1).padStart(6);
  console.log(
    `  ${worst.label.padEnd(26)} ${megabytes.toFixed(1).padStart(7)} ${f(steps.build)} ${f(steps.stringify).padStart(10)} ${f(steps.parse)} ${f(steps.check).padStart(8)} ${f(steps.render).padStart(7)} ${f(steps.answer).padStart(7)}`,
  );
}
console.log(`  longest single step: ${longest.toFixed(1)} ms`);

const dataDir = mkdtempSync(join(tmpdir(), 'palisade-stall-'));
const server = await startServe({ PALISADE_DATA_DIR: dataDir });
const store = new EmbeddedStore({ path: dataDir });
try {
  const { ownerId, ownerKey, otherKey } = await seedTenants(store, LIMIT);
  await new Promise((r) => setTimeout(r, 1500));
  const probe = startProbe({ dnsPort: server.dnsPort, qname: 'other.example', apiUrl: server.url, apiPath: '/domains/other.example', apiKey: otherKey });
  const started = performance.now();
  await writeWorstZones(store, ownerId, zones, apexOf);
  // The server's feed picks up commits from other processes within a second or two.
  await new Promise((r) => setTimeout(r, 2500));
  await changeThroughApi(server.url, ownerKey, zones, apexOf);
  await new Promise((r) => setTimeout(r, 500));
  const seen = await probe.stop();
  console.log(`palisade serve, ${zones.length} worst zones written beside it and changed through its API (${((performance.now() - started) / 1000).toFixed(1)} s):`);
  console.log(`  another tenant's DNS: ${seen.dnsCount} answers, longest wait ${seen.dnsMaxMs.toFixed(1)} ms, ${seen.lost} lost`);
  console.log(`  another tenant's API reads: ${seen.apiCount}, longest ${seen.apiMaxMs.toFixed(1)} ms`);
} finally {
  await store.close();
  await stopProcess(server);
  rmSync(dataDir, { recursive: true, force: true });
}
