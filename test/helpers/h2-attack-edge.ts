// The set-up the HTTP/2 attack tests share: a real `palisade serve` edge with two tenants
// (`alpha.test` attacked, `bravo.test` the other one), each its own account, in front of one
// backend that says what it heard and how much of its long answers it could write; the other
// tenant's requests (and their latency); and `attack`, which runs one attacker's connection from a
// raw frame client (h2-frames.ts) until the edge ends it, then checks the edge let go of what it held.
import { createServer, type Server } from 'node:http';
import { expect } from 'vitest';
import { partPid, runAdminCli, startServe, stopProcess, type RunningServer } from './spawn-palisade.ts';
import { removeTempDirs, tempDir } from './temp.ts';
import { fetchOver } from './edge-clients.ts';
import { fdKinds, openFds } from './process-stats.ts';
import { RawH2 } from './h2-frames.ts';

/** `/big`'s answer, written at once. */
export const BIG = Buffer.alloc(4 * 1024 * 1024, 'b');
/** How much of `/endless…` the backend offers, written chunk by chunk only as its socket drains. */
export const ENDLESS_BYTES = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'e');

export interface AttackResult {
  livedMs: number;
  ended: boolean;
  goaway: number | undefined;
  /** The other tenant's status, asked 100 ms into the attack from another client. */
  other: number;
}

export class H2AttackEdge {
  /** Each request the backend heard: "GET /path host=… note=… injected=…". */
  readonly heard: string[] = [];
  /** Bytes of `/endless…` answers the backend's socket took so far (the edge read them or the kernel holds them). */
  endlessWritten = 0;
  private attackers = 0;
  readonly httpsPort: number;
  readonly edgePid: number;

  private constructor(
    readonly server: RunningServer,
    private readonly backend: Server,
  ) {
    this.httpsPort = Number(new URL(server.edgeHttpsUrl!).port);
    this.edgePid = partPid(server, 'edge');
  }

  static async start(env: Record<string, string> = {}): Promise<H2AttackEdge> {
    const made: { edge?: H2AttackEdge } = {};
    const backend = createServer((req, res) => {
      made.edge?.heard.push(`${req.method} ${req.url} host=${req.headers.host} note=${req.headers['x-note']} injected=${req.headers['x-injected']}`);
      req.resume();
      req.on('end', () => {
        if (req.url === '/big') return void res.end(BIG);
        if (req.url?.startsWith('/endless')) return made.edge?.writeEndless(res);
        res.end(`site ${req.headers.host}`);
      });
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const port = (backend.address() as { port: number }).port;
    const base = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' };
    const keys: string[] = [];
    for (const name of ['attacked', 'other']) {
      const user = await runAdminCli(base, ['user', 'create', '--name', name, '--email', `${name}@example.org`]);
      expect(user.code, user.stderr).toBe(0);
      keys.push(JSON.parse(user.stdout).key.api_key as string);
    }
    const edge = new H2AttackEdge(await startServe({ ...base, ...env }), backend);
    made.edge = edge;
    for (const [key, domain] of [[keys[0]!, 'alpha.test'], [keys[1]!, 'bravo.test']] as const) {
      const res = await fetch(`${edge.server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain, backend: `127.0.0.1:${port}`, ssl: true, baseprotection: true }) });
      expect(res.status, await res.text()).toBe(201);
    }
    const started = Date.now();
    while (Date.now() - started < 10_000 && (await edge.otherTenant().catch(() => 0)) !== 200) await new Promise((r) => setTimeout(r, 100));
    return edge;
  }

  async stop(): Promise<void> {
    await stopProcess(this.server);
    this.backend.closeAllConnections();
    this.backend.close();
    removeTempDirs();
  }

  /** The other tenant's h2 request, from another client: its status. */
  async otherTenant(path = '/probe'): Promise<number> {
    return (await fetchOver('h2', { port: this.httpsPort, authority: 'bravo.test', path, localAddress: '127.0.0.50' })).status;
  }

  /** `count` of the other tenant's requests one after another (each its own connection): their latencies in ms, sorted, and each answered 200. */
  async otherTenantLatencies(count: number): Promise<number[]> {
    const took: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      expect(await this.otherTenant(`/latency-${i}`)).toBe(200);
      took.push(performance.now() - started);
    }
    return took.sort((a, b) => a - b);
  }

  /**
   * Opens the attacker's connection, then calls `step` (which writes a batch of frames) every
   * turn of the event loop (or every `everyMs`: a flood paced to stay under nghttp2's own bursts)
   * until the connection ends or 10 s pass; meanwhile the other tenant asks once. Returns how long
   * the connection lived and what it was told. From an address of its own unless given.
   */
  async attack(step: (c: RawH2, round: number) => void, everyMs = 0, address = this.freshAttacker()): Promise<AttackResult> {
    const fdsBefore = openFds(this.edgePid);
    const c = await RawH2.open(this.httpsPort, 'alpha.test', address);
    const other = new Promise((r) => setTimeout(r, 100)).then(() => this.otherTenant());
    let round = 0;
    while (!c.closed && c.goaway === undefined && performance.now() - c.openedAt < 10_000) {
      if (!c.socket.writableNeedDrain) step(c, round++);
      await new Promise((r) => (everyMs ? setTimeout(r, everyMs) : setImmediate(r)));
    }
    const livedMs = performance.now() - c.openedAt;
    const ended = await c.ended(1000);
    c.close();
    const result = { livedMs, ended, goaway: c.goaway, other: await other };
    // The figures for the record (docs/edge.md): how long the attacker's connection lived, what it was told.
    console.log(`h2 attack: connection lived ${Math.round(livedMs)} ms, GOAWAY ${String(c.goaway)}, ${round} rounds`);
    await this.expectFdsBack(fdsBefore);
    return result;
  }

  /** An attacker address not used yet (a peer cut off for a flood is refused for a while: each attack comes from its own). */
  freshAttacker(): string {
    return `127.0.1.${++this.attackers}`;
  }

  /** The edge lets go of a connection and what it held: its descriptors back within a small margin of `before`. */
  async expectFdsBack(before: number): Promise<void> {
    const started = Date.now();
    while (openFds(this.edgePid) > before + 5 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(openFds(this.edgePid), `descriptors held after the attack: ${JSON.stringify(fdKinds(this.edgePid))}`).toBeLessThanOrEqual(before + 5);
  }

  /** Writes `/endless…`'s answer a chunk at a time, each only once the socket has taken the last (backpressure), counting what it took. */
  private writeEndless(res: import('node:http').ServerResponse): void {
    let sent = 0;
    const more = (): void => {
      while (sent < ENDLESS_BYTES && !res.destroyed) {
        sent += CHUNK.length;
        this.endlessWritten += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end();
    };
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(ENDLESS_BYTES) });
    more();
  }
}

/** The 99th percentile of sorted samples (the largest but one per hundred). */
export const p99 = (sorted: number[]): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
