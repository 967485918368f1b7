// The operator CLI, run as a real process against a real data directory, checked through the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let env: Record<string, string>;
let server: RunningServer;
beforeAll(async () => {
  env = { PALISADE_DATA_DIR: tempDir() };
  server = await startServe(env);
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  removeTempDirs();
});

const admin = (...args: string[]) => runAdminCli(env, args);
const me = (key: string) => fetch(`${server.url}/me`, { headers: { 'x-auth-key': key } });

// Every step starts a CLI process (~2 s each here, several times that on a loaded CI machine).
describe('palisade admin', { timeout: 120_000 }, () => {
  it('creates a user and prints its key once; the key works while the server runs', async () => {
    const res = await admin('user', 'create', '--name', 'Alice', '--email', 'alice@example.org', '--max-domains', '5');
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.key.api_key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    const r = await me(out.key.api_key);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ name: 'Alice', limits: { max_domains: 5 } });
    const list = JSON.parse((await admin('user', 'list')).stdout);
    expect(list.map((u: { email: string }) => u.email)).toContain('alice@example.org');
  });

  it('creates and revokes keys; a revoked key is refused, the others still work', async () => {
    const user = JSON.parse((await admin('user', 'create', '--name', 'Bob', '--email', 'bob@example.org')).stdout);
    const second = JSON.parse((await admin('key', 'create', '--user', String(user.user.id), '--label', 'ci')).stdout);
    expect((await me(second.api_key)).status).toBe(200);
    const keys = JSON.parse((await admin('key', 'list', '--user', String(user.user.id))).stdout);
    expect(keys.map((k: { label: string }) => k.label)).toEqual(['initial', 'ci']);
    expect(JSON.stringify(keys)).not.toContain(second.api_key);
    expect((await admin('key', 'revoke', String(second.id))).code).toBe(0);
    expect((await me(second.api_key)).status).toBe(401);
    expect((await me(user.key.api_key)).status).toBe(200);
  });

  it('registers, updates and removes nodes, visible through GET /nodes/', async () => {
    const user = JSON.parse((await admin('user', 'create', '--name', 'Carol', '--email', 'carol@example.org')).stdout);
    const key = user.key.api_key as string;
    const node = JSON.parse((await admin('node', 'add', '--name', 'fra1', '--ipv4', '192.0.2.10', '--ipv6', '2001:DB8::10', '--location', 'de')).stdout);
    expect(node).toMatchObject({ name: 'fra1', ipv4: '192.0.2.10', ipv6: '2001:db8::10', location: 'DE', status: 'active' });
    const updated = JSON.parse((await admin('node', 'update', String(node.id), '--status', 'maintenance', '--ipv6', 'none')).stdout);
    expect(updated).toMatchObject({ status: 'maintenance', ipv6: null });
    const nodes = (await (await fetch(`${server.url}/nodes/`, { headers: { 'x-auth-key': key } })).json()) as unknown[];
    expect(nodes).toContainEqual(updated);
    expect((await admin('node', 'remove', String(node.id))).code).toBe(0);
    expect((await admin('node', 'remove', String(node.id))).code).toBe(2);
  });

  it('refuses to remove a node a domain is bound to', async () => {
    const user = JSON.parse((await admin('user', 'create', '--name', 'Dan', '--email', 'dan@example.org')).stdout);
    const node = JSON.parse((await admin('node', 'add', '--name', 'ams1', '--ipv4', '192.0.2.20', '--location', 'NL')).stdout);
    const res = await fetch(`${server.url}/domains`, {
      method: 'POST',
      headers: { 'x-auth-key': user.key.api_key, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'bound.example', backend: '198.51.100.1', bind_node: [node.id] }),
    });
    expect(res.status).toBe(201);
    const removal = await admin('node', 'remove', String(node.id));
    expect(removal.code).toBe(2);
    expect(removal.stderr).toContain('domain bound.example');
  });

  it('registers change-feed consumers whose token opens /sync/*, and removes them', async () => {
    const added = await admin('consumer', 'add', '--name', 'ns1', '--url', 'http://127.0.0.1:9/notify');
    expect(added.code, added.stderr).toBe(0);
    const consumer = JSON.parse(added.stdout);
    expect(consumer.token).toMatch(/^nt_[A-Za-z0-9_-]{43}$/);
    expect(consumer.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const snapshot = () => fetch(`${server.url}/sync/snapshot`, { headers: { authorization: `Bearer ${consumer.token}` } });
    expect((await snapshot()).status).toBe(200);
    const list = (await admin('consumer', 'list')).stdout;
    expect(list).toContain('ns1');
    expect(list).not.toContain(consumer.secret);
    expect((await admin('consumer', 'remove', String(consumer.id))).code).toBe(0);
    expect((await snapshot()).status).toBe(401);
    expect((await admin('consumer', 'add', '--name', 'x', '--url', 'ftp://nope')).code).toBe(2);
  });

  it('explains bad input with exit code 2', async () => {
    const cases = [
      ['user', 'create', '--name', 'x'],
      ['user', 'create', '--name', 'x', '--email', 'not-an-email'],
      ['node', 'add', '--name', 'n', '--location', 'DE'],
      ['node', 'add', '--name', 'n', '--ipv4', '1.2.3', '--location', 'DE'],
      ['node', 'add', '--name', 'n', '--ipv4', '192.0.2.1', '--location', 'XX'],
      ['key', 'create', '--user', '424242'],
      ['frobnicate'],
      ['user', 'create', '--bogus'],
    ];
    // Independent commands: run side by side, as operators' scripts may.
    const results = await Promise.all(cases.map((args) => admin(...args)));
    results.forEach((res, i) => {
      expect(res.code, cases[i]!.join(' ')).toBe(2);
      expect(res.stderr).toMatch(/^palisade admin: .+/);
      expect(res.stderr).not.toContain('    at ');
    });
  });
});
