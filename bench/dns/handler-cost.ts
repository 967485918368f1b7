// CPU cost of one query in the name server's own code, no sockets: the benchmark's query mix as
// packets, handed to the QueryHandler (as the UDP listener does) again and again. Prints CPU
// nanoseconds per query (process.cpuUsage: this process's time, steady whatever else runs on the
// machine) for: the cached path, the uncached path (cache off), both with the bundled GeoIP
// database (and the workload's geo variants on www and api), and the floor — a bare copy of a precomputed reply with the ID patched.
// Repeatable enough to compare one change with the next; under valgrind --tool=callgrind the
// instruction counts are (BENCH_ITERATIONS=200000 keeps that short).
//   node --import tsx bench/dns/handler-cost.ts [cached|uncached|geo|uncached-geo|bare|all]
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { BUNDLED_GEOIP_DB } from '../../src/geo/default-db.ts';
import { GeoLocator } from '../../src/geo/locator.ts';
import { HOSTMASTER, NS, queryFile, workloadZones } from './workload.ts';

const ZONES = Number(process.env.BENCH_ZONES ?? 1000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2_000_000);
const which = process.argv[2] ?? 'all';

/** A query packet: ID, RD, one question, no EDNS (as dnsperf sends by default). */
function packet(id: number, name: string, type: number): Buffer {
  const labels = name.split('.').filter(Boolean);
  const out = Buffer.alloc(12 + labels.reduce((n, l) => n + l.length + 1, 0) + 1 + 4);
  out.writeUInt16BE(id & 0xffff, 0);
  out[2] = 0x01;
  out.writeUInt16BE(1, 4);
  let o = 12;
  for (const l of labels) {
    out[o++] = l.length;
    o += out.write(l, o, 'latin1');
  }
  out[o++] = 0;
  out.writeUInt16BE(type, o);
  out.writeUInt16BE(1, o + 2);
  return out;
}

const TYPES: Record<string, number> = { A: 1, AAAA: 28, MX: 15, TXT: 16, SRV: 33, CNAME: 5 };
const packets = queryFile(ZONES, 100_000)
  .trim()
  .split('\n')
  .map((line, i) => {
    const [name, type] = line.split(' ');
    return packet(i, name!, TYPES[type!]!);
  });

function server(cache: boolean, geo: boolean): DnsServer {
  const locator = geo ? GeoLocator.open(BUNDLED_GEOIP_DB) : undefined;
  const s = new DnsServer({
    host: '127.0.0.1',
    port: 0,
    nameservers: NS,
    hostmaster: HOSTMASTER,
    tcp: DEFAULT_TCP_LIMITS,
    handler: { cache, locate: locator && ((address: string) => locator.locate(address)) },
    log: pino({ level: 'silent' }),
  });
  s.index.replaceAll(workloadZones(ZONES, 1, geo), [], 0);
  return s;
}

function run(label: string, once: (p: Buffer, i: number) => unknown): void {
  // Warm-up: every packet once (fills the cache, compiles the path).
  for (let i = 0; i < packets.length; i++) once(packets[i]!, i);
  const before = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) once(packets[i % packets.length]!, i);
  const used = process.cpuUsage(before);
  const ns = ((used.user + used.system) * 1000) / ITERATIONS;
  console.log(`${label.padEnd(40)} ${ns.toFixed(0).padStart(6)} CPU-ns/query   (${ITERATIONS} queries, ${ZONES} zones)`);
}

/** 10,000 client addresses over many networks: a locator's own cache does not answer every lookup. */
const clients = Array.from({ length: 10_000 }, (_, i) => ({ address: `${11 + (i % 180)}.${(i * 7) % 256}.${(i * 13) % 256}.${1 + (i % 250)}`, port: 5353 }));
if (which === 'all' || which === 'cached') {
  const s = server(true, false);
  run('cached path (handler)', (p, i) => s.handler.handle(p, 'udp', clients[i % clients.length]!));
}
if (which === 'all' || which === 'geo') {
  const s = server(true, true);
  run('cached path, GeoIP on, geo variants', (p, i) => s.handler.handle(p, 'udp', clients[i % clients.length]!));
}
if (which === 'all' || which === 'uncached') {
  const s = server(false, false);
  run('uncached path (parse, engine, encode)', (p, i) => s.handler.handle(p, 'udp', clients[i % clients.length]!));
}
if (which === 'all' || which === 'uncached-geo') {
  const s = server(false, true);
  run('uncached path, GeoIP on, geo variants', (p, i) => s.handler.handle(p, 'udp', clients[i % clients.length]!));
}
if (which === 'all' || which === 'bare') {
  const s = server(true, false);
  const replies = packets.map((p, i) => s.handler.handle(p, 'udp', clients[i % clients.length]!)!);
  run('floor: precomputed reply, ID patched', (p, i) => {
    const reply = replies[i % replies.length]!;
    const out = Buffer.allocUnsafe(reply.length);
    reply.copy(out);
    out[0] = p[0]!;
    out[1] = p[1]!;
    return out;
  });
}
