// serve's parts are separate processes under one supervisor: a part that dies (kill -9, a crash
// by signal) is logged and started again on the same ports while the others keep answering; the
// supervisor's SIGTERM stops them all; a supervisor killed outright takes no part with it for long.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { partPid, runAdminCli, startServe, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let key: string;
let env: Record<string, string>;

function api(method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(2_000),
  });
}

/** The parts' pids as the supervisor last named them. */
/** A process's Node options: its command line before the script. */
const nodeOptions = (pid: number): string[] => {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return args.slice(1, args.findIndex((a) => a.endsWith('palisade.js') || a.endsWith('main.ts')));
};
const partPids = (): Record<string, number> => Object.fromEntries((['api', 'dns', 'edge'] as const).map((part) => [part, partPid(server, part)]));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return { value, ms: Date.now() - started };
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms\n${server.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const edgeAnswers = async () => ((await fetch(`${server.edgeUrl}/`, { headers: { host: 'unknown.example' }, signal: AbortSignal.timeout(1_000) })).status > 0 ? true : undefined);

/** Asks the other parts every 100 ms while `during` runs; every answer must come. */
async function othersKeepAnswering(parts: ('api' | 'dns' | 'edge')[], during: () => Promise<void>): Promise<{ asked: number; failed: string[] }> {
  let stop = false;
  const failed: string[] = [];
  let asked = 0;
  const loop = (async () => {
    while (!stop) {
      const checks: Promise<unknown>[] = [];
      if (parts.includes('api')) checks.push(api('GET', '/domains/sup.example').then((r) => r.status === 200 || failed.push(`api ${r.status}`)));
      if (parts.includes('dns')) checks.push(dig(server.dnsPort, 'plain.sup.example', 'A').then((r) => r.status === 'NOERROR' || failed.push(`dns ${r.status}`)));
      if (parts.includes('edge')) checks.push(edgeAnswers().then((ok) => ok || failed.push('edge')));
      await Promise.all(checks.map((c) => c.catch((error: Error) => failed.push(error.message))));
      asked++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await during();
  stop = true;
  await loop;
  return { asked, failed };
}

beforeAll(async () => {
  // Reports every 300 ms, backends checked every 200 ms: the uptime test below sees node 0 soon.
  env = { PALISADE_DATA_DIR: tempDir(), PALISADE_EDGE_REPORT_MS: '300', PALISADE_EDGE_CHECK_INTERVAL_MS: '200' };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'sup', '--email', 'sup@example.org']);
  key = JSON.parse(created.stdout).key.api_key;
  server = await startServe(env);
  expect((await api('POST', '/domains', { domain: 'sup.example', backend: '198.51.100.1' })).status).toBe(201);
  expect((await api('GET', '/domains/sup.example/activatens')).status).toBe(200);
  expect((await api('POST', '/domains/sup.example/dnsrecords', { name: 'plain', type: 1, value: '203.0.113.7' })).status).toBe(201);
  await until('the record on the name server', async () => ((await dig(server.dnsPort, 'plain.sup.example', 'A')).answer.length > 0 ? true : undefined), 5_000);
});

afterAll(async () => {
  if (server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  removeTempDirs();
});

describe('serve: parts under a supervisor', () => {
  it('runs the API, the name server and the edge as three processes, each named on its command line', () => {
    const pids = partPids();
    expect(Object.keys(pids).sort()).toEqual(['api', 'dns', 'edge']);
    for (const pid of Object.values(pids)) expect(alive(pid)).toBe(true);
    expect(new Set(Object.values(pids)).size).toBe(3);
    expect(Object.values(pids)).not.toContain(server.child.pid);
    // The API part alone runs with a small young generation (idle, it held start-up's nursery:
    // ~60 MB); the name server and the edge keep V8's default, their answers per CPU-second need it.
    expect(nodeOptions(pids.api!)).toContain('--max-semi-space-size=2');
    expect(nodeOptions(pids.dns!)).not.toContain('--max-semi-space-size=2');
    expect(nodeOptions(pids.edge!)).not.toContain('--max-semi-space-size=2');
  });

  it('the edge killed with SIGKILL: DNS and the API keep answering, the edge is back on its port within seconds', async () => {
    const before = partPids().edge!;
    let back = 0;
    const { asked, failed } = await othersKeepAnswering(['api', 'dns'], async () => {
      process.kill(before, 'SIGKILL');
      back = (await until('the edge back', edgeAnswers, 20_000)).ms;
    });
    expect(failed).toEqual([]);
    expect(asked).toBeGreaterThan(0);
    // Back within seconds (250 ms of back-off, then a start); a part left down fails the wait.
    expect(back).toBeLessThan(10_000);
    expect(partPids().edge).not.toBe(before);
    expect(server.output()).toMatch(/"part":"edge","pid":\d+,"code":null,"signal":"SIGKILL".*"msg":"supervisor: a part stopped unexpectedly; starting it again"/);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/palisade_part_restarts_total\{part="edge"\} 1/);
    expect(metrics).toMatch(/palisade_part_up\{part="edge"\} 1/);
    console.log(`edge killed: back in ${back} ms; API and DNS answered ${asked} rounds meanwhile, none failed`);
  });

  it('the name server crashing (SIGSEGV): the API and the edge keep answering, DNS is back with its zones', async () => {
    const before = partPids().dns!;
    let back = 0;
    const { failed } = await othersKeepAnswering(['api', 'edge'], async () => {
      process.kill(before, 'SIGSEGV');
      back = (await until('DNS back', async () => ((await dig(server.dnsPort, 'plain.sup.example', 'A')).answer.length > 0 ? true : undefined), 20_000)).ms;
    });
    expect(failed).toEqual([]);
    expect(back).toBeLessThan(10_000);
    console.log(`name server crashed: back in ${back} ms with its zones`);
  });

  it('the API killed with SIGKILL: DNS and the edge keep answering; the API is back and changes flow again', async () => {
    const before = partPids().api!;
    const { failed } = await othersKeepAnswering(['dns', 'edge'], async () => {
      process.kill(before, 'SIGKILL');
      await until('the API back', async () => ((await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok ? true : undefined), 10_000);
    });
    expect(failed).toEqual([]);
    expect(nodeOptions(partPids().api!)).toContain('--max-semi-space-size=2');
    // The restarted API's commits reach the name server as quickly as before: passed on at once
    // (tens of ms, a dig included), where the name server's own once-a-second read of the store
    // would spread them over 0–1 s. The median of 10 writes, under 250 ms: the machine's load
    // would have to hold half of them; the once-a-second read would have to fall early for half.
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      expect((await api('POST', '/domains/sup.example/dnsrecords', { name: `after${i}`, type: 1, value: '203.0.113.8' })).status).toBe(201);
      delays.push((await until('the new record', async () => ((await dig(server.dnsPort, `after${i}.sup.example`, 'A')).answer.length > 0 ? true : undefined), 5_000)).ms);
    }
    expect([...delays].sort((x, y) => x - y)[5], delays.join(', ')).toBeLessThan(250);
  });

  it("the edge part's uptime reports reach the API part through the supervisor, as node 0's", async () => {
    const { value } = await until(
      'uptime measures from node 0',
      async () => {
        const u = (await (await api('GET', '/domains/sup.example/uptime')).json()) as { nodes: Record<string, unknown>; minute: { summary: { checks: number } } };
        return u.minute.summary.checks > 0 && '0' in u.nodes ? u : undefined;
      },
      15_000,
    );
    expect(Object.keys(value.nodes)).toEqual(['0']);
  });

  it('SIGTERM stops every part and the supervisor within the bound', async () => {
    const pids = Object.values(partPids());
    const started = Date.now();
    server.child.kill('SIGTERM');
    const [code] = await server.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(13_000);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  it('a supervisor killed with SIGKILL: its parts leave on their own and free their ports', async () => {
    server = await startServe(env);
    const pids = Object.values(partPids());
    server.child.kill('SIGKILL');
    await server.exited;
    await until('the parts gone', async () => (pids.every((pid) => !alive(pid)) ? true : undefined), 10_000);
    // The same ports can be had again at once.
    const again = await startServe({ ...env, PALISADE_API_PORT: new URL(server.url).port, PALISADE_DNS_PORT: String(server.dnsPort) });
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
