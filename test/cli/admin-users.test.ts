// Operator commands on accounts: limits, disable/enable (keys refused, data kept), delete (refused
// while the user holds domains unless --force, which removes each with its own change-feed entry),
// and no duplicate user e-mail or node name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin, UsageError } from '../../src/cli/admin.ts';
import { ApiError } from '../../src/errors.ts';
import { StoreError } from '../../src/store/errors.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
const admin = async (...args: string[]) => {
  const out: unknown[] = [];
  await runAdmin(api.store, args, (v) => out.push(v));
  return out[0] as Record<string, unknown>;
};
const refused = async (args: string[]) => {
  const error = await runAdmin(api.store, args, () => undefined).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error instanceof UsageError || error instanceof ApiError || error instanceof StoreError, String(error)).toBe(true);
  return (error as Error).message;
};

beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

describe('palisade admin user …', () => {
  it('refuses a second user with the same e-mail address (any case)', async () => {
    await admin('user', 'create', '--name', 'one', '--email', 'same@example.org');
    expect(await refused(['user', 'create', '--name', 'two', '--email', 'SAME@example.org'])).toContain('already has the e-mail address');
  });

  it("changes a user's limits", async () => {
    const { user } = await admin('user', 'create', '--name', 'lim', '--email', 'lim@example.org');
    const id = String((user as { id: number }).id);
    const changed = await admin('user', 'limits', id, '--max-domains', '3', '--max-ips', '50');
    expect(changed).toMatchObject({ limits: { max_domains: 3, max_ips_per_list: 50, max_records_per_domain: 1000 } });
    expect(await refused(['user', 'limits', id])).toContain('give at least one');
  });

  it('disable refuses the user\'s keys (401) and keeps its data; enable lets them in again', async () => {
    const { user, key } = await api.user();
    expect((await api.request('POST', '/domains', { key, body: { domain: 'kept.example', backend: '198.51.100.1' } })).status).toBe(201);
    await admin('user', 'disable', String(user.id));
    const denied = await api.request('GET', '/me', { key });
    expect(denied.status).toBe(401);
    expect(denied.body.detail).toContain('disabled');
    expect(await api.store.getZone('kept.example')).toBeDefined();
    await admin('user', 'enable', String(user.id));
    expect((await api.request('GET', '/domains/kept.example', { key })).status).toBe(200);
  });

  it('delete is refused while the user holds domains; --force removes each domain and list with its own change entry', async () => {
    const { user, key } = await api.user();
    for (const d of ['gone1.example', 'gone2.example']) await api.request('POST', '/domains', { key, body: { domain: d, backend: '198.51.100.1' } });
    await api.request('POST', '/security/iplist', { key, body: { name: 'l', ips: ['192.0.2.1'] } });
    expect(await refused(['user', 'delete', String(user.id)])).toContain('still holds 2 domains and 1 IP lists');
    const before = await api.store.currentRevision();
    expect(await admin('user', 'delete', String(user.id), '--force')).toEqual({ removed: user.id, domains: 2, iplists: 1 });
    const feed = await api.store.changesSince(before, 100);
    expect('changes' in feed && feed.changes.map((c) => `${c.kind} ${c.key} ${c.op}`)).toEqual([
      'zone gone1.example delete',
      'zone gone2.example delete',
      expect.stringMatching(/^iplist \d+ delete$/),
      `user ${user.id} delete`,
    ]);
    expect(await api.store.getUser(user.id)).toBeUndefined();
    expect((await api.request('GET', '/me', { key })).status).toBe(401);
    // The names are free again.
    const other = await api.user();
    expect((await api.request('POST', '/domains', { key: other.key, body: { domain: 'gone1.example', backend: '198.51.100.1' } })).status).toBe(201);
  });
});

describe('palisade admin node …', () => {
  it('refuses a duplicate node name, on add and on rename', async () => {
    await admin('node', 'add', '--name', 'fra1', '--ipv4', '192.0.2.10', '--location', 'DE');
    const second = await admin('node', 'add', '--name', 'ams1', '--ipv4', '192.0.2.11', '--location', 'NL');
    expect(await refused(['node', 'add', '--name', 'fra1', '--ipv4', '192.0.2.12', '--location', 'DE'])).toContain('already named fra1');
    expect(await refused(['node', 'update', String(second.id), '--name', 'fra1'])).toContain('already named fra1');
    expect(await admin('node', 'update', String(second.id), '--name', 'ams1', '--location', 'NL')).toMatchObject({ name: 'ams1' });
  });
});
