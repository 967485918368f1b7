// Domains whose backends stay down, in a real `palisade serve` (its edge checking and reporting
// every fraction of a second, its API looking at the domains that are not up every second): once
// the first verdicts are in, further rounds repeat them unchanged and must cost no store write,
// no event and no change in the feed — only a change does work. Then the backend comes up: that
// change is still seen at once (events, the uptime state, the DNS failover released).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { startBackendAt, type StoppableBackend } from '../helpers/stoppable-backend.ts';

/** Proxied domains, and DNS-only ones with a failover that answers (they go on failover). */
const PROXIED = 12;
const DNS_ONLY = 4;
const proxied = Array.from({ length: PROXIED }, (_, i) => `idle${i}.example`);
const dnsOnly = Array.from({ length: DNS_ONLY }, (_, i) => `idledns${i}.example`);
/** The API's looks at the domains that are not up: every second here (5 s by default). */
const WATCH_SECONDS = 1;
/** More than two of those looks (four), and many edge reports (eight). */
const QUIET_MS = 4_000;

let serve: RunningServer;
let key: string;
let backendPort: number;
let backend: StoppableBackend | undefined;
let failover: Server;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${serve.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

/** The serve process's counters, summed over their labels (but the heartbeat, written every 30 s whatever happens). */
async function counters(): Promise<{ reports: number; verdicts: number; looks: number; writes: number; events: number }> {
  const text = await (await fetch(`${serve.url}/metrics`)).text();
  const sum = (pattern: string) => [...text.matchAll(new RegExp(`^${pattern} (\\d+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  return {
    reports: sum('palisade_uptime_reports_total'),
    verdicts: sum('palisade_uptime_verdicts_total'),
    looks: sum('palisade_uptime_looks_total'),
    writes: sum('palisade_uptime_store_writes_total\\{doc="(?:health|watch|failover)"\\}'),
    events: sum('palisade_events_total(?:\\{[^}]*\\})?'),
  };
}

/** The domains' revisions: a failover switch is a change in the feed and moves its domain's. */
async function revisions(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const d of [...proxied, ...dnsOnly]) out[d] = ((await (await call('GET', `/domains/${d}`)).json()) as { revision: number }).revision;
  return out;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${serve.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const stateOf = async (domain: string) => ((await (await call('GET', `/domains/${domain}/uptime`)).json()) as { state: string }).state;

beforeAll(async () => {
  // Nothing listens there until the backend comes up: every check is refused.
  backendPort = await freePort();
  failover = createServer((_req, res) => res.end('failover'));
  await new Promise<void>((resolve) => failover.listen(0, '127.0.0.2', resolve));
  const env = { PALISADE_DATA_DIR: tempDir() };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'A', '--email', 'a@example.org']);
  key = (JSON.parse(created.stdout) as { key: { api_key: string } }).key.api_key;
  serve = await startServe({ ...env, PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_CHECK_INTERVAL_MS: '200', PALISADE_EDGE_REPORT_MS: '500', PALISADE_MONITOR_WATCH_SECONDS: String(WATCH_SECONDS) }, START_TIMEOUT_MS);
  const failoverAt = `127.0.0.2:${(failover.address() as { port: number }).port}`;
  for (const domain of proxied) expect((await call('POST', '/domains', { domain, backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
  for (const domain of dnsOnly) expect((await call('POST', '/domains', { domain, enabled: false, backend: `127.0.0.1:${backendPort}`, failover: failoverAt })).status).toBe(201);
}, 90_000);

afterAll(async () => {
  if (serve) await stopProcess(serve);
  await backend?.stop();
  failover?.close();
  removeTempDirs();
});

describe('domains whose backends stay down', { timeout: 120_000 }, () => {
  it('after the first verdicts, further rounds write nothing, tell nothing and change nothing in the feed', async () => {
    const all = PROXIED + DNS_ONLY;
    // First verdicts: every domain down (or on failover), each told once, the DNS-only ones switched.
    await until('the first verdicts', async () => {
      const c = await counters();
      return c.verdicts >= all && c.events >= PROXIED + 2 * DNS_ONLY ? c : undefined;
    });
    for (const d of dnsOnly) await until(`${d} on failover`, async () => (((await (await call('GET', `/domains/${d}`)).json()) as { failover_active: boolean }).failover_active ? true : undefined));
    // One look of the API at every domain after them, so that the quiet window starts settled.
    const settled = await counters();
    await until('a look at every domain', async () => ((await counters()).looks >= settled.looks + all ? true : undefined), 30_000);

    const before = await counters();
    const revisionsBefore = await revisions();
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const after = await counters();
    // The rounds did happen: reports came in and the domains were looked at again, more than once.
    expect(after.reports - before.reports).toBeGreaterThanOrEqual(5);
    expect(after.looks - before.looks).toBeGreaterThanOrEqual(2 * all);
    // And did nothing: no verdict changed, no store write, no event, no domain switched.
    expect({ verdicts: after.verdicts - before.verdicts, writes: after.writes - before.writes, events: after.events - before.events }).toEqual({ verdicts: 0, writes: 0, events: 0 });
    expect(await revisions()).toEqual(revisionsBefore);
    for (const d of proxied) expect(await stateOf(d)).toBe('down');
    for (const d of dnsOnly) expect(await stateOf(d)).toBe('failover');
  });

  it('the backend comes up: seen at once — recovered, told, the DNS failover released', async () => {
    const before = await counters();
    backend = await startBackendAt(backendPort, (_req, res) => res.end('ok'));
    const upAt = Date.now();
    await until('every domain up', async () => {
      for (const d of [...proxied, ...dnsOnly]) if ((await stateOf(d)) !== 'up') return undefined;
      return true;
    });
    for (const d of dnsOnly) await until(`${d} failover released`, async () => (((await (await call('GET', `/domains/${d}`)).json()) as { failover_active: boolean }).failover_active ? undefined : true));
    const seenMs = Date.now() - upAt;
    const after = await counters();
    // Each domain told: recovered (and the DNS-only ones' failover released).
    expect(after.events - before.events).toBe(PROXIED + 2 * DNS_ONLY);
    expect(after.verdicts - before.verdicts).toBe(PROXIED + DNS_ONLY);
    // Two passing checks 200 ms apart and a report 50 ms after the switch: seconds, not a round
    // of the 5 s look (a wide margin for a loaded machine).
    expect(seenMs).toBeLessThan(15_000);
  });
});
