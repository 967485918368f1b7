// A DNS server process for benchmarks: loads the generated workload into the real DnsServer
// (no API, no store) and listens on loopback. Prints "ready PORT".
//   BENCH_ZONES=1000 BENCH_CACHE=1 [BENCH_GEOIP_DB=file.mmdb] node --import tsx bench/dns/server-process.ts
// With a GeoIP database the zones get geo variants and clients are located through it.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { GeoLocator } from '../../src/geo/locator.ts';
import { HOSTMASTER, NS, workloadZones } from './workload.ts';

const zones = Number(process.env.BENCH_ZONES ?? 1000);
const geo = process.env.BENCH_GEOIP_DB ? GeoLocator.open(process.env.BENCH_GEOIP_DB) : undefined;
const server = new DnsServer({
  host: '127.0.0.1',
  port: Number(process.env.BENCH_PORT ?? 0),
  nameservers: NS,
  hostmaster: HOSTMASTER,
  tcp: DEFAULT_TCP_LIMITS,
  handler: { cache: process.env.BENCH_CACHE !== '0', locate: geo && ((address: string) => geo.locate(address)) },
  // Cookies on, as the roles ship them. Response-rate limiting off: one benchmarking client at
  // one address is exactly the traffic it exists to stop.
  cookieSecret: randomBytes(16),
  log: pino({ level: 'warn' }),
});
server.index.replaceAll(workloadZones(zones, 1, geo !== undefined), [], 0);
const port = await server.listen();
console.log(`ready ${port}`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
