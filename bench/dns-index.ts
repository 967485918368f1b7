// Zone index size and build time: N zones × 20 records built into the DNS server's index.
//   npm run bench:dns-index            (100,000 zones)
//   BENCH_ZONES=10000 npm run bench:dns-index
import { ZoneIndex } from '../src/dns/zone/index.ts';
import { HOSTMASTER, NS, workloadZones } from './dns/workload.ts';

const ZONES = Number(process.env.BENCH_ZONES ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
const rssMb = () => {
  gc?.();
  return process.memoryUsage().rss / 1024 / 1024;
};
const heapMb = () => {
  gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

const base = rssMb();
let started = performance.now();
const zones = workloadZones(ZONES);
const docsMs = performance.now() - started;
const withDocs = rssMb();

const index = new ZoneIndex({ nameservers: NS, hostmaster: HOSTMASTER });
started = performance.now();
index.replaceAll(zones, [], 0);
const buildMs = performance.now() - started;
const withIndex = rssMb();
const records = zones.reduce((n, z) => n + z.records.length, 0);
// A name server keeps only the index: drop the documents and see what stays.
const heapBoth = heapMb();
zones.length = 0;
const heapIndex = heapMb();
const indexOnly = rssMb();

console.log(`zone index: ${ZONES} zones, ${records} records${gc ? '' : ' (run with --expose-gc for steadier RSS)'}`);
console.log(`  zone documents generated in ${(docsMs / 1000).toFixed(2)} s, +${(withDocs - base).toFixed(0)} MB RSS`);
console.log(`  index built in ${(buildMs / 1000).toFixed(2)} s (${Math.round(ZONES / (buildMs / 1000))} zones/s), +${(withIndex - withDocs).toFixed(0)} MB RSS`);
console.log(`  process RSS ${withIndex.toFixed(0)} MB with documents and index (${indexOnly.toFixed(0)} MB after dropping the documents: V8 keeps freed pages)`);
console.log(`  JS heap in use: ${heapBoth.toFixed(0)} MB with documents, ${heapIndex.toFixed(0)} MB for the index alone (what a name server keeps)`);
if (index.size !== ZONES) throw new Error(`index holds ${index.size} zones`);
