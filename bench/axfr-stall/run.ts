// Big zone transfers against the name server's event loop: a DNS server (this process) serving a
// zone of `records` A records to `transfers` concurrent AXFRs (dig, each its own process, TSIG
// signed), while a UDP probe asks another zone every few milliseconds. Measured in the server's
// process: the worst event-loop stall as the main thread's CPU time between two turns of a 1 ms
// timer (what the loop spent without coming back to its timers: a loaded machine's waits for a
// core left out), the worst event-loop delay by the wall clock (perf_hooks.monitorEventLoopDelay:
// those waits counted), the longest wait for a probe's answer; and whether every transfer completed.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { Secondaries } from '../../src/dns/transfer/secondaries.ts';
import { EDGE_NODES, HOSTMASTER, makeZone, NAMESERVERS } from '../../test/helpers/dns-fixture.ts';

export interface StallOptions {
  /** A records in the transferred zone. */
  records: number;
  /** AXFRs started at once. */
  transfers: number;
  /** Transfers one secondary may have running at once (the server's bound). */
  perSecondary: number;
  /** A probe query every this many ms. */
  probeEveryMs?: number;
  /**
   * The AXFRs reach the server together: each dig connects to a gate that passes its bytes on only
   * once every transfer has connected (or after 10 s). A loaded machine starts dig processes one
   * by one, and transfers that never overlap never wait their turn.
   */
  together?: boolean;
}

export interface StallFigures {
  /** Most main-thread CPU time (ms) between two turns of a 1 ms timer: the longest the loop was held. */
  stallCpuMs: number;
  /** Timer turns that came after more than 50 ms of main-thread CPU (a transfer built whole: one each; the garbage collector: a few). */
  stallsOver50: number;
  /** The longest garbage-collection pause (ms, wall clock). */
  gcMaxMs: number;
  /** Worst event-loop delay seen while the transfers ran (ms). */
  loopMaxMs: number;
  /** 99th percentile of the event-loop delay (ms). */
  loopP99Ms: number;
  /** Longest wait for a probe's answer (ms), and how many were answered / lost (no answer within 2 s). */
  probeMaxMs: number;
  probes: number;
  lost: number;
  /** Transfers that ended with the SOA twice and every record. */
  completed: number;
  /** Wall time of all the transfers (ms). */
  elapsedMs: number;
  /** The most transfers the server had running at once, and how many waited for their turn. */
  peakRunning: number;
  queued: number;
}

const BIG = 'big.stall.example';
const OTHER = 'other.stall.example';

function probeQuery(name: string, id: number): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

/** One AXFR by dig (at the lowest priority: the server's CPU is what is measured); resolves with the number of records it received (0: failed). */
function axfr(port: number, tsig: string): Promise<number> {
  return new Promise((resolve) => {
    execFile('nice', ['-n', '19', 'dig', '-p', String(port), '@127.0.0.1', BIG, 'AXFR', '-y', tsig, '+noall', '+stats', '+tries=1', '+time=30'], { maxBuffer: 1 << 20 }, (_error, stdout) => {
      const m = /XFR size: (\d+) records/.exec(stdout);
      resolve(m ? Number(m[1]) : 0);
    });
  });
}

/** A TCP gate to `port`: holds each connection's bytes until `count` have connected (at most 10 s), then passes all on. */
async function tcpGate(port: number, count: number): Promise<{ port: number; close: () => void }> {
  const held: Array<() => void> = [];
  const openAll = () => {
    for (const open of held.splice(0)) open();
  };
  const deadline = setTimeout(openAll, 10_000);
  const gate = createServer((client) => {
    client.pause();
    held.push(() => {
      const upstream = connect(port, '127.0.0.1');
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    });
    if (held.length === count) {
      clearTimeout(deadline);
      openAll();
    }
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  return {
    port: (gate.address() as { port: number }).port,
    close: () => {
      clearTimeout(deadline);
      gate.close();
    },
  };
}

export async function runAxfrStall(options: StallOptions): Promise<StallFigures> {
  const secret = randomBytes(32).toString('base64');
  const tsig = `hmac-sha256:stall-key:${secret}`;
  const big = makeZone(
    { domain: BIG },
    Array.from({ length: options.records }, (_, i) => ({ name: `h${i}`, type: 1, value: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` })),
  );
  const other = makeZone({ domain: OTHER }, [{ name: 'www', type: 1, value: '192.0.2.1' }]);
  const server = new DnsServer({
    host: '127.0.0.1',
    port: 0,
    nameservers: NAMESERVERS,
    hostmaster: HOSTMASTER,
    tcp: DEFAULT_TCP_LIMITS,
    rateLimit: { rate: 0, slip: 0 },
    transfers: {
      secondaries: Secondaries.of([{ name: 'stall', addresses: ['127.0.0.1'], port: 53, tsigKey: tsig, zones: [], catalog: false }]),
      notify: false,
      perSecondary: options.perSecondary,
    },
    log: pino({ level: 'silent' }),
  });
  server.index.replaceAll([big, other], EDGE_NODES, 1);
  const port = await server.listen();
  const slots = server.transfers!.slots;
  let peakRunning = 0;

  const socket = createSocket('udp4');
  const sent = new Map<number, number>();
  let probeMax = 0;
  let probes = 0;
  let lost = 0;
  let id = 0;
  socket.on('message', (message) => {
    const at = sent.get(message.readUInt16BE(0));
    if (at === undefined) return;
    sent.delete(message.readUInt16BE(0));
    probeMax = Math.max(probeMax, performance.now() - at);
    probes++;
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const timer = setInterval(() => {
    peakRunning = Math.max(peakRunning, slots.running);
    for (const [old, at] of sent) {
      if (performance.now() - at > 2000) {
        sent.delete(old);
        lost++;
      }
    }
    id = (id + 1) & 0xffff;
    sent.set(id, performance.now());
    socket.send(probeQuery(`www.${OTHER}`, id), port, '127.0.0.1');
  }, options.probeEveryMs ?? 5);

  let stallCpuMs = 0;
  let stallsOver50 = 0;
  let gcMaxMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  let lastCpu = process.threadCpuUsage();
  const cpuTimer = setInterval(() => {
    const spent = process.threadCpuUsage(lastCpu);
    lastCpu = process.threadCpuUsage();
    const ms = (spent.user + spent.system) / 1000;
    stallCpuMs = Math.max(stallCpuMs, ms);
    if (ms > 50) stallsOver50++;
  }, 1);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const gate = options.together ? await tcpGate(port, options.transfers) : undefined;
  const sizes = await Promise.all(Array.from({ length: options.transfers }, () => axfr(gate?.port ?? port, tsig)));
  gate?.close();
  const elapsedMs = performance.now() - started;
  loop.disable();
  clearInterval(timer);
  clearInterval(cpuTimer);
  gc.disconnect();
  // Answers still on their way.
  await new Promise((r) => setTimeout(r, 100));
  socket.close();
  server.stopTransfers();
  await server.close();
  // At least the zone's records and its SOA twice.
  const expected = options.records + 2;
  return {
    stallCpuMs,
    stallsOver50,
    gcMaxMs,
    loopMaxMs: loop.max / 1e6,
    loopP99Ms: loop.percentile(99) / 1e6,
    probeMaxMs: probeMax,
    probes,
    lost: lost + sent.size,
    completed: sizes.filter((n) => n >= expected).length,
    elapsedMs,
    peakRunning,
    queued: slots.queued,
  };
}
