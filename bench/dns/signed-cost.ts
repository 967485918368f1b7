// What signing costs per query, in the name server's own code (no sockets), in one run: the
// benchmark's query mix (1,000 zones, every zone with a signing key) handed to the QueryHandler
// with EDNS, DO=0 and DO=1. Prints CPU-ns per query and queries per CPU-second (process.cpuUsage:
// this process's time, steady whatever else runs) for:
//   - cached, DO=0 / DO=1: repeated questions from the answer cache (the DO bit is part of its key);
//   - uncached DO=0, and DO=1 (answer cache off): parse, engine, signatures from the signature cache, encode;
//   - uncached DO=1 with no signature cache: every RRSIG computed (the cost a miss pays).
//   node --import tsx bench/dns/signed-cost.ts     (npm run bench:dns-dnssec)
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { makeSigningKey } from '../../test/helpers/dnssec-keys.ts';
import { HOSTMASTER, NS, queryFile, workloadZones } from './workload.ts';

const ZONES = Number(process.env.BENCH_ZONES ?? 1000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 1_000_000);
const ALGORITHM = process.env.BENCH_ALGORITHM === '15' ? 15 : 13;

/** A query packet: ID, one question, an OPT (payload 1232) with DO as asked. */
function packet(id: number, name: string, type: number, dnssecOk: boolean): Buffer {
  const labels = name.split('.').filter(Boolean);
  const out = Buffer.alloc(12 + labels.reduce((n, l) => n + l.length + 1, 0) + 1 + 4 + 11);
  out.writeUInt16BE(id & 0xffff, 0);
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(1, 10);
  let o = 12;
  for (const l of labels) {
    out[o++] = l.length;
    o += out.write(l, o, 'latin1');
  }
  out[o++] = 0;
  out.writeUInt16BE(type, o);
  out.writeUInt16BE(1, o + 2);
  o += 4;
  out[o] = 0;
  out.writeUInt16BE(41, o + 1);
  out.writeUInt16BE(1232, o + 3);
  out.writeUInt32BE(dnssecOk ? 0x8000 : 0, o + 5);
  out.writeUInt16BE(0, o + 9);
  return out;
}

const TYPES: Record<string, number> = { A: 1, AAAA: 28, MX: 15, TXT: 16, SRV: 33, CNAME: 5 };
const lines = queryFile(ZONES, 100_000)
  .trim()
  .split('\n')
  .map((line) => line.split(' ') as [string, string]);
const packetsFor = (dnssecOk: boolean) => lines.map(([name, type], i) => packet(i, name, TYPES[type]!, dnssecOk));

const key = makeSigningKey(ALGORITHM);
const zones = workloadZones(ZONES, 1, false).map((zone) => ({ ...zone, domain: { ...zone.domain, dnssec: true, signing: { keys: [key] } } }));

function server(cache: boolean, signatureCache = true): DnsServer {
  const s = new DnsServer({
    host: '127.0.0.1',
    port: 0,
    nameservers: NS,
    hostmaster: HOSTMASTER,
    tcp: DEFAULT_TCP_LIMITS,
    handler: { cache, signatureCache: signatureCache ? undefined : { entries: 0, bytes: 65_536 } },
    log: pino({ level: 'silent' }),
  });
  s.index.replaceAll(zones, [], 0);
  return s;
}

const client = { address: '192.0.2.1', port: 5353 };
const results: Array<[string, number]> = [];

function run(label: string, s: DnsServer, packets: Buffer[], iterations = ITERATIONS): number {
  // Warm-up: every packet once (fills the caches, compiles the path).
  for (const p of packets) s.handler.handle(p, 'udp', client);
  const before = process.cpuUsage();
  for (let i = 0; i < iterations; i++) s.handler.handle(packets[i % packets.length]!, 'udp', client);
  const used = process.cpuUsage(before);
  const ns = ((used.user + used.system) * 1000) / iterations;
  results.push([label, ns]);
  console.log(`${label.padEnd(48)} ${ns.toFixed(0).padStart(7)} CPU-ns/query ${Math.round(1e9 / ns).toLocaleString('en').padStart(11)} q/CPU-s`);
  return ns;
}

console.log(`${ZONES} zones signed with algorithm ${ALGORITHM}, ${lines.length} distinct queries, ${ITERATIONS} per run`);
const plain = packetsFor(false);
const signed = packetsFor(true);
const cached = server(true);
const unsignedHit = run('cached, DO=0', cached, plain);
const signedHit = run('cached, DO=1 (signed answers)', cached, signed);
const uncached = server(false);
run('uncached, DO=0', uncached, plain);
run('uncached, DO=1, signature cache', uncached, signed);
// Every answer signed afresh: far slower, so fewer iterations.
run('uncached, DO=1, no signature cache', server(false, false), signed, Math.min(ITERATIONS, 20_000));
console.log(`DO=1 cache hits / DO=0 cache hits: ${(unsignedHit / signedHit).toFixed(2)}× the queries per CPU-second`);
