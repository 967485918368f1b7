// The change-feed endpoints name servers pull from, and the signed push that tells them to.
import { createServer } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { hashApiKey } from '../../src/model/user.ts';
import { PushNotifier, signNotification } from '../../src/sync/notifier.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { until } from '../helpers/until.ts';

let api: TestApi;
let key: string;
const token = 'nt_test_consumer_token_0000000000000000000000';

beforeAll(async () => {
  api = await startApi({ PALISADE_CHANGE_RETENTION: '100' });
  ({ key } = await api.user());
  await api.store.createConsumer({ name: 'ns1', url: null, tokenHash: hashApiKey(token), secret: 'unused' });
});
afterAll(() => api.close());

const sync = (path: string, bearer = token) => api.request('GET', path, { headers: { authorization: `Bearer ${bearer}` } });

describe('GET /sync/*', () => {
  it('accept only consumer tokens, never customer keys', async () => {
    for (const path of ['/sync/snapshot', '/sync/changes?since=0']) {
      expect((await api.request('GET', path)).status).toBe(401);
      expect((await api.request('GET', path, { key })).status).toBe(401);
      expect((await sync(path, key)).status).toBe(401);
      expect((await sync(path, 'nt_unknown_token_000000000000')).status).toBe(401);
    }
    expect((await api.request('GET', '/me', { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('snapshot: active zones with their records, the nodes, the revision', async () => {
    await api.request('POST', '/domains', { key, body: { domain: 'on.example', backend: '198.51.100.1' } });
    await api.request('POST', '/domains', { key, body: { domain: 'off.example', backend: '198.51.100.1' } });
    await api.request('POST', '/domains/on.example/dnsrecords', { key, body: { name: 'www', type: 1, value: '192.0.2.1' } });
    await api.request('GET', '/domains/on.example/activatens', { key });
    const node = await api.store.createNode({ name: 'edge', ipv4: '192.0.2.100', ipv6: null, location: 'DE', status: 'active' });
    const res = await sync('/sync/snapshot');
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('application/x-ndjson');
    const lines = (res.body as string).trimEnd().split('\n').map((line) => JSON.parse(line));
    const [first, ...rest] = lines;
    const last = rest.pop();
    expect(first.snapshot.revision).toBe(await api.store.currentRevision());
    expect(first.snapshot.nodes_revision).toBe(first.snapshot.revision);
    expect(first.snapshot.nodes).toEqual([node]);
    expect(rest.map((line) => line.zone.domain.domain)).toEqual(['on.example']);
    expect(rest[0].zone.records).toEqual([expect.objectContaining({ name: 'www', value: '192.0.2.1' })]);
    expect(last).toEqual({ end: { zones: 1 } });
  });

  it('snapshot of many zones: one line each, in order, every one whole', async () => {
    const names = Array.from({ length: 1200 }, (_, i) => `bulk${String(i).padStart(4, '0')}.example`);
    const owner = await api.store.createUser({ name: 'bulk', email: 'bulk@example.org', limits: { max_domains: names.length } });
    await Promise.all(
      names.map((name) =>
        api.store.createZone(() => ({
          domain: { ...DOMAIN_DEFAULTS, domain: name, backend: '198.51.100.1', mask: '', ownerId: owner.id, ns_active: true, created: '', updated: '', revision: 0 },
          records: [],
        })),
      ),
    );
    const res = await sync('/sync/snapshot');
    const lines = (res.body as string).trimEnd().split('\n').map((line) => JSON.parse(line));
    const zones = lines.filter((line) => line.zone).map((line) => line.zone.domain.domain);
    expect(zones.filter((name) => name.startsWith('bulk'))).toEqual(names);
    expect(lines.at(-1)).toEqual({ end: { zones: zones.length } });
  });

  it('changes: in revision order, record changes as their difference, deletions as deletes, paged by limit', async () => {
    const start = await api.store.currentRevision();
    await api.request('POST', '/domains/on.example/dnsrecords', { key, body: { name: 'api', type: 1, value: '192.0.2.2' } });
    await api.request('GET', '/domains/off.example/activatens', { key });
    await api.request('DELETE', '/domains/off.example', { key });
    const res = await sync(`/sync/changes?since=${start}`);
    expect(res.status).toBe(200);
    // off.example changed twice in the page: it appears once, at its last change.
    expect(res.body.changes.map((c: { revision: number; key: string; op: string }) => [c.revision - start, c.key, c.op])).toEqual([
      [1, 'on.example', 'put'],
      [3, 'off.example', 'delete'],
    ]);
    // A record write travels as the difference, not as the zone.
    expect(res.body.changes[0].data).toBeUndefined();
    expect(res.body.changes[0].records).toEqual({ put: [expect.objectContaining({ name: 'api', type: 1, value: '192.0.2.2' })], del: [] });
    expect(res.body).toMatchObject({ since: start, revision: start + 3, current: start + 3 });
    const paged = await sync(`/sync/changes?since=${start}&limit=1`);
    expect(paged.body).toMatchObject({ revision: start + 1, current: start + 3 });
    expect((await sync(`/sync/changes?since=${start + 3}`)).body.changes).toEqual([]);
  });

  it('changes: one record changed in a zone of 20,000 costs a few hundred bytes; a later whole document supersedes earlier differences', async () => {
    const owner = (await api.store.listUsers())[0]!.id;
    const limits = (await api.store.getUser(owner))!.limits;
    await api.store.updateUser(owner, { limits: { max_records_per_domain: 30_000 } });
    await api.store.createZone((ctx) => ({
      domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: 'huge.example', ownerId: owner, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
      records: Array.from({ length: 20_000 }, (_, i) => ({ id: ctx.nextRecordId(), name: `h${i}`, type: 1 as const, value: '192.0.2.1', ttl: 300, priority: null, target: [] as number[] })),
    }));
    const start = await api.store.currentRevision();
    const created = await api.request('POST', '/domains/huge.example/dnsrecords', { key, body: { name: 'one', type: 1, value: '192.0.2.7' } });
    expect(created.status).toBe(201);
    const patched = await api.request('PATCH', `/domains/huge.example/dnsrecords/${created.body.id}`, { key, body: { name: 'two' } });
    expect(patched.status).toBe(200);
    const page = await sync(`/sync/changes?since=${start}`);
    const bytes = JSON.stringify(page.body).length;
    expect(bytes).toBeLessThan(1000);
    expect(page.body.changes.map((c: { records: unknown }) => c.records)).toEqual([
      { put: [expect.objectContaining({ id: created.body.id, name: 'one' })], del: [] },
      { put: [expect.objectContaining({ id: created.body.id, name: 'two' })], del: [{ id: created.body.id, name: 'one' }] },
    ]);
    // A change of settings no name server uses (bwlimit) reaches none.
    await api.request('PATCH', '/domains/huge.example', { key, body: { bwlimit: 77 } });
    expect((await sync(`/sync/changes?since=${start + 2}`)).body).toMatchObject({ revision: start + 3, changes: [] });
    // One it uses: to a name server of this release (v=2), the settings alone, before the differences,
    // which are kept — a few hundred bytes still.
    await api.request('PATCH', '/domains/huge.example', { key, body: { mask: 'one' } });
    const heads = await sync(`/sync/changes?since=${start}&v=2`);
    expect(JSON.stringify(heads.body).length).toBeLessThan(3000);
    expect(heads.body.changes.map((c: { revision: number; domain?: unknown; records?: unknown; data?: unknown }) => [c.revision - start, 'domain' in c, 'records' in c, 'data' in c])).toEqual([
      [4, true, false, false],
      [1, false, true, false],
      [2, false, true, false],
    ]);
    expect(heads.body.changes[0].domain).toMatchObject({ domain: 'huge.example', mask: 'one', bwlimit: 77, revision: start + 4 });
    // To one of an earlier release: the zone travels whole, once, and the differences before it are left out.
    const whole = await sync(`/sync/changes?since=${start}`);
    expect(whole.body.changes).toHaveLength(1);
    expect(whole.body.changes[0].data.records).toHaveLength(20_001);
    // A zone whole, for a name server that must serve one it does not hold.
    const zone = await sync('/sync/zones/huge.example');
    expect(zone.status).toBe(200);
    expect(zone.body.records).toHaveLength(20_001);
    expect(zone.body.domain).toEqual((await api.store.getZoneHead('huge.example'))!.domain);
    expect((await sync('/sync/zones/none.example')).status).toBe(404);
    expect((await api.request('GET', '/sync/zones/huge.example', { key })).status).toBe(401);
    await api.request('DELETE', '/domains/huge.example', { key });
    await api.store.updateUser(owner, { limits });
  });

  it('changes: a document written many times travels once; big documents make several bounded pages, never a huge one', async () => {
    let since = 0;
    const start = await api.store.currentRevision();
    // Settings no name server uses: nothing travels; ones it uses: once, as they now are.
    for (let i = 0; i < 40; i++) await api.request('PATCH', '/domains/on.example', { key, body: i % 2 === 0 ? { bwlimit: 1000 + i } : { tags: [`t${i}`], mask: `m${i}` } });
    const repeated = await sync(`/sync/changes?since=${start}`);
    expect(repeated.body.changes).toHaveLength(1);
    expect(repeated.body.changes[0]).toMatchObject({ revision: start + 40, key: 'on.example', data: { domain: { bwlimit: 1038, mask: 'm39' } } });
    expect(repeated.body).toMatchObject({ revision: start + 40, current: start + 40 });
    const heads = await sync(`/sync/changes?since=${start}&v=2`);
    expect(heads.body.changes).toEqual([{ revision: start + 40, at: expect.any(String), kind: 'zone', key: 'on.example', op: 'put', domain: expect.objectContaining({ bwlimit: 1038, mask: 'm39', tags: ['t39'] }) }]);
    for (let i = 0; i < 40; i++) await api.request('PATCH', '/domains/on.example', { key, body: { tags: [`u${i}`], bwlimit: i } });
    expect((await sync(`/sync/changes?since=${start + 40}&v=2`)).body).toMatchObject({ revision: start + 80, current: start + 80, changes: [] });
    expect((await sync(`/sync/changes?since=${start + 40}`)).body).toMatchObject({ revision: start + 80, current: start + 80, changes: [] });
    // The revision name servers answer from is the store's bookkeeping, not the API's.
    expect((await api.store.getZoneHead('on.example'))!.domain.nsRevision).toBe(start + 40);
    expect((await api.request('GET', '/domains/on.example', { key })).body).not.toHaveProperty('nsRevision');
    since = start + 80;

    // Three zones of ~2.4 MB each: a page holds at most ~4 MiB of documents.
    const owner = (await api.store.listUsers())[0]!.id;
    const big = await Promise.all(
      ['big1.example', 'big2.example', 'big3.example'].map((name) =>
        api.store.createZone((ctx) => ({
          domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: name, ownerId: owner, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
          records: Array.from({ length: 600 }, (_, i) => ({ id: ctx.nextRecordId(), name: `t${i}`, type: 6 as const, value: 'x'.repeat(4000), ttl: 300, priority: null, target: [] as number[] })),
        })),
      ),
    );
    expect(big).toHaveLength(3);
    const pages: number[] = [];
    const seen: string[] = [];
    for (let guard = 0; guard < 10; guard++) {
      const page = await sync(`/sync/changes?since=${since}`);
      if (page.body.changes.length === 0) break;
      pages.push(JSON.stringify(page.body).length);
      seen.push(...page.body.changes.map((c: { key: string }) => c.key));
      since = page.body.revision;
    }
    expect(seen.sort()).toEqual(['big1.example', 'big2.example', 'big3.example']);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const bytes of pages) expect(bytes).toBeLessThan(4 * 1_048_576 + 2_500_000);
  });

  it('edges: a change of tags alone reaches none; one of tags and a setting they use does, once', async () => {
    const node = await api.store.createNode({ name: 'tagedge', ipv4: '192.0.2.150', ipv6: null, location: 'DE', status: 'active' });
    const edgeToken = 'nt_edge_consumer_token_for_tags_00000000000';
    await api.store.createConsumer({ name: 'edge', url: null, node: node.id, tokenHash: hashApiKey(edgeToken), secret: 's3cret' });
    const start = await api.store.currentRevision();
    for (let i = 0; i < 5; i++) await api.request('PATCH', '/domains/on.example', { key, body: { tags: [`e${i}`] } });
    const none = await sync(`/sync/edge/changes?since=${start}`, edgeToken);
    expect(none.body).toMatchObject({ revision: start + 5, changes: [] });
    await api.request('PATCH', '/domains/on.example', { key, body: { bwlimit: 5 } });
    await api.request('PATCH', '/domains/on.example', { key, body: { tags: ['last'] } });
    const some = await sync(`/sync/edge/changes?since=${start}`, edgeToken);
    expect(some.body.changes).toEqual([{ revision: start + 6, kind: 'domain', op: 'put', key: 'on.example', data: expect.objectContaining({ bwlimit: 5, tags: ['last'] }) }]);
  });

  it('410 Gone (problem+json) once a revision falls out of the retained history', async () => {
    for (let i = 0; i < 110; i++) await api.request('PATCH', '/domains/on.example', { key, body: { bwlimit: i + 1 } });
    const res = await sync('/sync/changes?since=1');
    expect(res.status).toBe(410);
    expect(res.contentType).toContain('application/problem+json');
    expect(res.body.code).toBe('GONE');
    expect(res.body.detail).toContain('/sync/snapshot');
  });
});

describe('push notifications', () => {
  it('POST {revision, id} to each consumer URL after commits, signed with its secret', async () => {
    const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    const { port } = receiver.address() as { port: number };
    await api.store.createConsumer({ name: 'ns2', url: `http://127.0.0.1:${port}/notify`, tokenHash: hashApiKey('nt_other_consumer_token_0000000'), secret: 'k3y' });
    const notifier = new PushNotifier(api.store, pino({ level: 'silent' }));
    await notifier.start();
    try {
      await api.request('PATCH', '/domains/on.example', { key, body: { cachelevel: 3 } });
      await until('the push', () => received.length > 0, 10_000, 25).catch(() => undefined);
      expect(received.length).toBeGreaterThanOrEqual(1);
      const last = received[received.length - 1]!;
      expect(JSON.parse(last.body)).toEqual({ revision: await api.store.currentRevision(), id: expect.stringMatching(/^[0-9a-f]{24}$/) });
      const timestamp = Number(last.headers['x-palisade-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
      expect(last.headers['x-palisade-signature']).toBe(signNotification('k3y', timestamp, last.body));
      expect(last.headers['x-palisade-signature']).not.toBe(signNotification('wrong', timestamp, last.body));
    } finally {
      notifier.stop();
      receiver.close();
    }
  });
});
