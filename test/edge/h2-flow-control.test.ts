// HTTP/2 flow control against a real edge with two tenants (helpers/h2-attack-edge.ts), from a raw
// frame client: a client that opens no window (CVE-2019-9517, internal data buffering) or stops
// reading one stream must make the edge stop reading the backend for it, not buffer the answers;
// the connection's other streams and other clients go on. And the other tenant's latency while an
// attacker works: its p99 before and during, printed for the record, asserted only with a wide margin.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect as h2connect } from 'node:http2';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDLESS_BYTES, H2AttackEdge, p99 } from '../helpers/h2-attack-edge.ts';
import { FLAG, FRAME, RawH2, headerBlock, headers, requestFields, settings, windowUpdate } from '../helpers/h2-frames.ts';
import { openFds, pssMiB } from '../helpers/process-stats.ts';

let edge: H2AttackEdge;

beforeAll(async () => {
  // A body's grace shortened (its least pace stays 500 bytes a second) so that a slow one is seen in seconds.
  edge = await H2AttackEdge.start({ PALISADE_EDGE_BODY_GRACE_MS: '1000' });
}, 90_000);

afterAll(async () => {
  await edge?.stop();
});

const GET = (path: string) => headerBlock(requestFields('alpha.test', path));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The other tenant's latency during an attack may grow, but not to the size of a stall: at most ten times its baseline, or under a second. */
const latencyWithinMargin = (before: number, during: number) => during <= Math.max(10 * before, 1000);

describe('HTTP/2 flow control', { timeout: 40_000 }, () => {
  it('zero window (CVE-2019-9517): large answers on 60 streams to a client that opens no window are not read from the backend, nor buffered', async () => {
    const fdsBefore = openFds(edge.edgePid);
    const pssBefore = pssMiB(edge.edgePid);
    const writtenBefore = edge.endlessWritten;
    const baseline = await edge.otherTenantLatencies(30);
    const c = await RawH2.open(edge.httpsPort, 'alpha.test', '127.0.0.60');
    // SETTINGS_INITIAL_WINDOW_SIZE 0: no stream may be sent a byte of DATA until a WINDOW_UPDATE, which never comes.
    c.send(settings([[0x4, 0]]));
    const STREAMS = 60;
    c.send(Buffer.concat(Array.from({ length: STREAMS }, (_, i) => headers(2 * i + 1, GET(`/endless-zero-${i}`), FLAG.END_HEADERS | FLAG.END_STREAM))));
    // Held for a while (the other tenant asking meanwhile), the edge's memory sampled.
    let pssMax = pssBefore;
    const sampling = setInterval(() => (pssMax = Math.max(pssMax, pssMiB(edge.edgePid))), 100);
    const during = await edge.otherTenantLatencies(30);
    await sleep(Math.max(0, 2000 - (performance.now() - c.openedAt)));
    const writtenSoFar = edge.endlessWritten - writtenBefore;
    await sleep(1000);
    clearInterval(sampling);
    const written = edge.endlessWritten - writtenBefore;
    const answered = Array.from({ length: STREAMS }, (_, i) => c.on(2 * i + 1, FRAME.HEADERS).length).filter(Boolean).length;
    console.log(
      `h2 zero window: ${STREAMS} streams × ${ENDLESS_BYTES / 2 ** 20} MiB asked, ${answered} answered (headers), ` +
        `backend wrote ${(written / 2 ** 20).toFixed(1)} MiB, edge PSS ${pssBefore.toFixed(0)} → max ${pssMax.toFixed(0)} MiB, ` +
        `connection ${c.closed || c.goaway !== undefined ? 'ended' : 'held'}; other tenant p99 ${p99(baseline).toFixed(1)} ms before, ${p99(during).toFixed(1)} ms during`,
    );
    // Not a byte of DATA went out; the backend's writes stopped (what it wrote is what the sockets'
    // buffers hold, a few MiB each, not the 3.75 GiB an edge that buffered answers would read); the
    // edge's memory grew by a small part of even that.
    expect(c.frames.filter((f) => f.type === FRAME.DATA)).toEqual([]);
    expect(written).toBe(writtenSoFar);
    expect(written).toBeLessThan((STREAMS * ENDLESS_BYTES) / 4);
    expect(pssMax - pssBefore).toBeLessThan(200);
    // The other tenant was answered throughout (otherTenantLatencies expects 200s); its latency here is
    // printed only: 60 backend connections opening at once weigh on a loaded machine's first requests.
    c.close();
    await edge.expectFdsBack(fdsBefore);
  });

  it("a stream whose reader stalls holds neither the connection's other streams nor another client, and its backend is not read on", async () => {
    const c = await RawH2.open(edge.httpsPort, 'alpha.test', '127.0.0.42');
    // The connection's window opened wide; stream 1's own window never reopened past its first 64 KiB.
    c.send(windowUpdate(0, 64 * 1024 * 1024));
    const writtenBefore = edge.endlessWritten;
    c.send(headers(1, GET('/endless-stalled'), FLAG.END_HEADERS | FLAG.END_STREAM));
    const started = performance.now();
    while (c.dataBytes(1) < 65_535 && performance.now() - started < 5000) await sleep(10);
    expect(c.dataBytes(1)).toBe(65_535);
    // Stream 3, on the same connection while stream 1 is stuck: answered whole.
    c.send(headers(3, GET('/small'), FLAG.END_HEADERS | FLAG.END_STREAM));
    const asked = performance.now();
    while (!c.on(3, FRAME.DATA).some((f) => f.flags & FLAG.END_STREAM) && performance.now() - asked < 5000) await sleep(10);
    expect(c.on(3, FRAME.DATA).some((f) => f.flags & FLAG.END_STREAM)).toBe(true);
    // Another client, the other tenant: answered.
    expect(await edge.otherTenant()).toBe(200);
    // The stalled stream's backend answer: read no further than buffers hold, and no longer growing.
    await sleep(500);
    const written = edge.endlessWritten - writtenBefore;
    await sleep(1000);
    expect(edge.endlessWritten - writtenBefore).toBe(written);
    expect(written).toBeLessThan(ENDLESS_BYTES / 2);
    expect(c.dataBytes(1)).toBe(65_535);
    console.log(`h2 stalled stream: backend wrote ${(written / 2 ** 20).toFixed(1)} MiB of ${ENDLESS_BYTES / 2 ** 20} MiB, then nothing more`);
    c.close();
  });
});

describe('the body deadline over HTTP/2', { timeout: 30_000 }, () => {
  it("is each stream's own: a body trickled on one stream gets 408 while another stream of the connection sends fast", async () => {
    const session = h2connect('https://localhost', {
      createConnection: () => tlsConnect({ host: '127.0.0.1', port: edge.httpsPort, servername: 'alpha.test', rejectUnauthorized: false, ALPNProtocols: ['h2'], localAddress: '127.0.0.62' } as ConnectionOptions),
    });
    session.on('error', () => undefined);
    const post = (path: string, length: number) => {
      const stream = session.request({ ':method': 'POST', ':path': path, ':authority': 'alpha.test', 'content-type': 'application/octet-stream', 'content-length': String(length) }, { endStream: false });
      const status = new Promise<number>((resolve) => {
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('close', () => resolve(0));
      });
      stream.on('error', () => undefined);
      stream.resume();
      return { stream, status };
    };
    // The slow one: a byte every 300 ms (3 a second, far below 500).
    const slow = post('/upload-slow', 10_000);
    // The fast one: 8 KiB every 10 ms as flow control lets it (hundreds of KiB a second), for up to 8 s.
    const FAST = 64 * 1024 * 1024;
    const fast = post('/upload-fast', FAST);
    const chunk = Buffer.alloc(8192, 'f');
    let slowStatus: number | undefined;
    void slow.status.then((s) => (slowStatus = s));
    const started = performance.now();
    let sentFast = 0;
    let lastTrickle = 0;
    while (slowStatus === undefined && performance.now() - started < 8000) {
      if (performance.now() - lastTrickle >= 300) {
        slow.stream.write('s');
        lastTrickle = performance.now();
      }
      if (!fast.stream.writableNeedDrain && sentFast < FAST) {
        fast.stream.write(chunk);
        sentFast += chunk.length;
      }
      await sleep(10);
    }
    const fastStatus = await Promise.race([fast.status, sleep(0).then(() => undefined)]);
    console.log(`h2 body deadline: the slow stream answered ${String(slowStatus)} after ${Math.round(performance.now() - started)} ms; the fast one had sent ${(sentFast / 2 ** 20).toFixed(1)} MiB, answered ${String(fastStatus)}`);
    expect(slowStatus).toBe(408);
    // The fast stream was still going, not cut with it.
    expect(fastStatus).toBeUndefined();
    expect(fast.stream.destroyed).toBe(false);
    session.destroy();
  });
});

describe("the other tenant's latency under attack", { timeout: 40_000 }, () => {
  it('Rapid Reset from an attacker that reconnects as soon as it is cut off, for 3 s', async () => {
    const fdsBefore = openFds(edge.edgePid);
    const baseline = await edge.otherTenantLatencies(30);
    // The attacker in a process of its own: its busy loop must not slow this process's requests.
    const attacker = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/h2-rapid-reset-attacker.ts', import.meta.url)), String(edge.httpsPort), '3.5'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    attacker.stdout.on('data', (c: Buffer) => (printed += c.toString()));
    const exited = once(attacker, 'exit');
    await sleep(300);
    const begun = performance.now();
    const during: number[] = [];
    while (performance.now() - begun < 3000) during.push(...(await edge.otherTenantLatencies(1)));
    await exited;
    const [connections, refused] = printed.trim().split(' ').map(Number) as [number, number];
    during.sort((a, b) => a - b);
    console.log(`h2 latency under Rapid Reset (${connections} attacker connections in ~3 s, ${refused} refused): other tenant p99 ${p99(baseline).toFixed(1)} ms before (30 requests), ${p99(during).toFixed(1)} ms during (${during.length} requests); median ${baseline[15]!.toFixed(1)} → ${during[Math.floor(during.length / 2)]!.toFixed(1)} ms`);
    expect(latencyWithinMargin(p99(baseline), p99(during))).toBe(true);
    await edge.expectFdsBack(fdsBefore);
  });
});
