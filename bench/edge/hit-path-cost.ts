// CPU cost of pieces of the edge's per-request work, alone (no sockets), each beside what it
// replaced, in interleaved pairs: CPU nanoseconds per call (process.cpuUsage: this process's own
// time, steadier on a busy machine than wall time). What the whole request costs is bench:edge's.
//   node --import tsx bench/edge/hit-path-cost.ts [log|log-stream|waf-key|metrics|headers|all]
import { pino } from 'pino';
import { AccessLog, ACCESS_MESSAGE, type AccessFields } from '../../src/edge/access-log.ts';
import { inspect } from '../../src/edge/waf/inspect.ts';
import { EdgeMetrics } from '../../src/edge/edge-metrics.ts';
import { forwardedRequestHeaders } from '../../src/edge/proxy.ts';
import type { IncomingMessage } from 'node:http';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300_000);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const which = process.argv[2] ?? 'all';

/** CPU ns per call of `run(i)` over ITERATIONS calls (after a warm-up). */
function cost(run: (i: number) => void): number {
  for (let i = 0; i < 20_000; i++) run(i);
  const before = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) run(i);
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / ITERATIONS;
}

function compare(name: string, variants: Record<string, (i: number) => void>): void {
  const results: Record<string, number[]> = {};
  for (let p = 0; p < PAIRS; p++) for (const [label, run] of Object.entries(variants)) (results[label] ??= []).push(cost(run));
  console.log(name);
  for (const [label, values] of Object.entries(results)) console.log(`  ${label.padEnd(44)} ${values.map((v) => v.toFixed(0).padStart(6)).join(' ')} CPU-ns per call`);
}

if (which === 'log' || which === 'all') {
  // A stream that takes the line and drops it: what is measured is building the line, not the write.
  let written = 0;
  const sink = { write: (line: string) => void (written += line.length) };
  const log = pino({ level: 'info', redact: { paths: ['req.headers["x-auth-key"]', 'headers["x-auth-key"]'], censor: '[redacted]' } }, sink).child({ part: 'edge', component: 'edge' });
  const access = new AccessLog(log);
  const fields = (i: number): AccessFields => ({
    domain: 'hit.bench.example',
    host: 'hit.bench.example',
    method: 'GET',
    path: '/file.css',
    scheme: 'http',
    protocol: 'http/1.1',
    status: 200,
    bytes: 1024,
    cache: 'HIT',
    blocked: undefined,
    ref: undefined,
    upstreamMs: undefined,
    via: undefined,
    ms: (i % 1000) / 100,
    client: `10.${(i >> 8) & 255}.${i & 255}.1`,
    complete: true,
    upgrade: undefined,
  });
  compare('access log line (a cache hit, 17 fields)', {
    'pino log.info (before)': (i) => log.info(fields(i), ACCESS_MESSAGE),
    'AccessLog.write (after)': (i) => access.write(fields(i)),
  });
  if (written === 0) throw new Error('nothing written');
}

if (which === 'waf-key' || which === 'all') {
  // wrk's request as bench:edge sends it: the verdict is remembered, so this is the key and the lookup.
  const headers = { host: 'hit.bench.example', 'x-forwarded-for': '10.0.0.1', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'accept-language': 'en-US,en;q=0.5', 'accept-encoding': 'gzip, deflate, br', cookie: 'session=abc123; theme=dark', connection: 'keep-alive' };
  const clients = Array.from({ length: 10_000 }, (_, i) => ({ ...headers, 'x-forwarded-for': `10.${i >> 8}.${i & 255}.1` }));
  compare('WAF verdict of a bodyless GET (remembered)', {
    'inspect(), 10,000 clients': (i) => void inspect('GET', '/file.css', clients[i % clients.length]!),
  });
}

if (which === 'metrics' || which === 'all') {
  const metrics = new EdgeMetrics();
  compare('metrics per request', { 'EdgeMetrics.request': (i) => metrics.request(i & 1 ? 200 : 304, 'HIT', 'http/1.1') });
}

if (which === 'headers' || which === 'all') {
  // A proxied miss: the request's headers for the backend (a browser's, through a front proxy).
  const req = { headers: { host: 'miss.bench.example', 'x-forwarded-for': '10.0.0.1', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', accept: 'text/html,*/*;q=0.8', 'accept-language': 'en-US,en;q=0.5', 'accept-encoding': 'gzip, deflate, br', cookie: 'session=abc123; theme=dark', connection: 'keep-alive' } } as unknown as IncomingMessage;
  let n = 0;
  compare("request headers for the backend (forwardedRequestHeaders)", {
    forwardedRequestHeaders: (i) => void (n += Object.keys(forwardedRequestHeaders(req, i & 1 ? '10.0.0.1' : '10.0.0.2', 'http', 'miss.bench.example')).length),
  });
  if (n === 0) throw new Error('no headers');
}

if (which === 'log-stream' || which === 'all') {
  // The access log through pino's own stream (sonic-boom, asynchronous) to /dev/null: 20 lines per
  // turn of the event loop, as under load, where a write is in flight most of the time. The
  // line per write as before, and AccessLog's lines of one turn joined.
  const destination = pino.destination({ dest: '/dev/null', sync: false });
  const log = pino({ level: 'info' }, destination).child({ part: 'edge', component: 'edge' });
  const access = new AccessLog(log);
  const line = (i: number): AccessFields => ({ domain: 'hit.bench.example', host: 'hit.bench.example', method: 'GET', path: '/file.css', scheme: 'http', protocol: 'http/1.1', status: 200, bytes: 1024, cache: 'HIT', blocked: undefined, ref: undefined, upstreamMs: undefined, via: undefined, ms: (i % 1000) / 100, client: `10.${(i >> 8) & 255}.${i & 255}.1`, complete: true, upgrade: undefined });
  const turns = async (write: (i: number) => void): Promise<number> => {
    const before = process.cpuUsage();
    let i = 0;
    for (let turn = 0; turn < ITERATIONS / 20; turn++) {
      for (let k = 0; k < 20; k++) write(i++);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const used = process.cpuUsage(before);
    return ((used.user + used.system) * 1000) / i;
  };
  const variants: Record<string, (i: number) => void> = {
    'pino log.info, a write per line': (i) => log.info(line(i), ACCESS_MESSAGE),
    'AccessLog flushed per line (a write per line)': (i) => {
      access.write(line(i));
      access.flush();
    },
    'AccessLog, a write per turn': (i) => access.write(line(i)),
  };
  const results: Record<string, number[]> = {};
  for (let p = 0; p < PAIRS; p++) for (const [label, write] of Object.entries(variants)) (results[label] ??= []).push(await turns(write));
  console.log('access log line through sonic-boom to /dev/null, 20 lines per turn (the event loop included)');
  for (const [label, values] of Object.entries(results)) console.log(`  ${label.padEnd(44)} ${values.map((v) => v.toFixed(0).padStart(6)).join(' ')} CPU-ns per line`);
  destination.flushSync();
}
