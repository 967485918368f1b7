// The Store contract, accounts and API keys: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { expectApiError, zoneFor, type OpenStore } from './helpers.ts';

export function usersContract(open: OpenStore): void {
  it('creates users and finds keys by hash only; revoked keys stay revoked', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'a', email: 'a@example.org', limits: { max_domains: 3 } });
    expect(user.limits.max_domains).toBe(3);
    expect(user.limits.max_records_per_domain).toBeGreaterThan(0);
    const key = await store.addApiKey(user.id, 'ab'.repeat(32), 'k');
    expect((await store.findApiKeyByHash('ab'.repeat(32)))?.userId).toBe(user.id);
    expect(await store.findApiKeyByHash('cd'.repeat(32))).toBeUndefined();
    expect((await store.revokeApiKey(key.id))?.revoked).toBeTruthy();
    expect((await store.findApiKeyByHash('ab'.repeat(32)))?.revoked).toBeTruthy();
    expect(await store.revokeApiKey(9999)).toBeUndefined();
    await expectApiError(store.addApiKey(9999, 'ef'.repeat(32), 'x'), 'NOT_FOUND');
    expect((await store.listApiKeys(user.id)).map((k) => k.id)).toEqual([key.id]);
    await store.close();
  });

  it('updates and deletes accounts: delete refused while they hold domains, keys gone after', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'del', email: 'del@example.org' });
    await store.addApiKey(user.id, 'cd'.repeat(32), 'k');
    expect(await store.updateUser(user.id, { limits: { max_domains: 2 }, disabled: true })).toMatchObject({ disabled: true, limits: { max_domains: 2, max_iplists: 100 } });
    await store.createZone((ctx) => zoneFor('held.example', user.id, ctx));
    await expectApiError(store.deleteUser(user.id), 'CONFLICT');
    await store.deleteZone('held.example', user.id);
    expect(await store.deleteUser(user.id)).toBe(true);
    expect(await store.getUser(user.id)).toBeUndefined();
    expect(await store.findApiKeyByHash('cd'.repeat(32))).toBeUndefined();
    expect(await store.deleteUser(user.id)).toBe(false);
    await expectApiError(store.updateUser(user.id, { disabled: false }), 'NOT_FOUND');
  });
}
