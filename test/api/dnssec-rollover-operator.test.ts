// A key rollover where the service cannot look at parent zones (no PALISADE_DELEGATION_RESOLVER):
// it never moves on by itself — the monitor keeps it published, the old key signing, and
// `next_step` names the operator's step — and `palisade admin domain dnssec-rollover --continue`
// ends each phase only once our own wait (the DNSKEY TTL, then the zone's) is over. The CLI is
// given a short PALISADE_DNSSEC_RESOLVER_CACHE_MAX_SECONDS for the second half, as an operator
// whose resolvers all cap their caches that low would be.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { freePort } from '../helpers/free-port.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const ZONE = 'rolled.example';
let server: RunningServer;
let env: Record<string, string>;
let key: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const status = async () => (await call('GET', `/domains/${ZONE}/dnssec`)).body;
const signerTags = async () => (await dig(server.dnsPort, ZONE, 'SOA', ['+dnssec'])).answer.filter((a) => a.type === 'RRSIG').map((a) => Number(a.data.split(/\s+/)[6]));
const dnskeyCount = async () => (await dig(server.dnsPort, ZONE, 'DNSKEY')).answer.filter((a) => a.type === 'DNSKEY').length;

beforeAll(async () => {
  env = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()), PALISADE_MONITOR_WATCH_SECONDS: '1', PALISADE_OWNERSHIP_RECHECK_SECONDS: '1', PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS: '1' };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'owner', '--email', 'owner@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  expect((await call('POST', '/domains', { domain: ZONE, backend: '198.51.100.1', dnssec: true })).status).toBe(201);
  expect((await call('GET', `/domains/${ZONE}/activatens`)).status).toBe(200);
  await until('signed answers', async () => (await signerTags()).length === 1, 10_000, 100);
}, START_TIMEOUT_MS * 2);

afterAll(async () => {
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('a key rollover without a resolver: the operator moves it on, never before our TTLs', () => {
  it('stays published by itself; --continue refused before the DNSKEY TTL, then each phase on the operator\'s word', { timeout: 60_000 }, async () => {
    const old = (await status()).keys[0];
    const started = await runAdminCli(env, ['domain', 'dnssec-rollover', ZONE]);
    expect(started.code, started.stderr).toBe(0);
    const fresh = JSON.parse(started.stdout);
    expect(started.stdout).not.toContain('private');
    await until('both keys published', async () => (await dnskeyCount()) === 2, 10_000, 100);
    // Several monitor passes (every second here): nothing moves without a look at the parent.
    await new Promise((r) => setTimeout(r, 3000));
    const waiting = await status();
    expect(waiting).toMatchObject({ state: 'rolling_over', rollover: { phase: 'publish', ds_to_add: [fresh.ds_to_add] } });
    expect(waiting.next_step).toContain('dnssec-rollover DOMAIN --continue');
    expect(await signerTags()).toEqual([old.key_tag]);

    // The operator's word, before our own wait (the DNSKEY TTL, an hour) is over: refused.
    const early = await runAdminCli(env, ['domain', 'dnssec-rollover', ZONE, '--continue']);
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/not yet: resolvers may still hold a DNSKEY set without the new key for \d+ s more/);
    expect((await status()).rollover.phase).toBe('publish');

    // An operator whose resolvers cap their caches at 2 s: 2 s and its allowance (1 s) after the start.
    const short = { ...env, PALISADE_DNSSEC_RESOLVER_CACHE_MAX_SECONDS: '2' };
    await new Promise((r) => setTimeout(r, 3000));
    const next = await runAdminCli(short, ['domain', 'dnssec-rollover', ZONE, '--continue']);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ ended: 'publish' });
    await until('the new key signing', async () => (await signerTags()).join() === String(fresh.key_tag), 10_000, 100);
    expect((await status()).keys.map((k: any) => [k.key_tag, k.role])).toEqual([[old.key_tag, 'retiring'], [fresh.key_tag, 'active']]);
    expect((await status()).next_step).toContain('--continue');

    // The zone's wait starts at the switch: refused at once, accepted once over.
    expect((await runAdminCli(short, ['domain', 'dnssec-rollover', ZONE, '--continue'])).stderr).toContain('answers signed by the old key alone');
    await new Promise((r) => setTimeout(r, 3000));
    const last = await runAdminCli(short, ['domain', 'dnssec-rollover', ZONE, '--continue']);
    expect(last.code, last.stderr).toBe(0);
    await until('the old key out of the DNSKEY set', async () => (await dnskeyCount()) === 1, 10_000, 100);
    expect(await status()).toMatchObject({ rollover: null, keys: [{ key_tag: fresh.key_tag, role: 'active' }] });
    expect((await runAdminCli(short, ['domain', 'dnssec-rollover', ZONE, '--continue'])).stderr).toContain('no key rollover is under way');
  });
});
