// Webhooks, events and uptime on the real API with its store (the worker delivering and the edge
// reporting are end to end in test/uptime/outage.test.ts): what a customer may register, what
// they read, what another customer cannot, and what a removed domain leaves behind (nothing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/model/user.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let a: { key: string; user: { id: number } };
let b: { key: string; user: { id: number } };
const EDGE_TOKEN = 'nt_edge_token_for_the_report_test_0001';

beforeAll(async () => {
  api = await startApi();
  a = await api.user();
  b = await api.user();
  const node = await api.store.createNode({ name: 'e7', ipv4: '198.51.100.70', ipv6: null, location: 'DE', status: 'active' });
  await api.store.createConsumer({ name: 'edge-e7', url: null, node: node.id, tokenHash: hashApiKey(EDGE_TOKEN), secret: 'unused' });
});
afterAll(async () => api.close());

const minuteNow = () => Date.now() - (Date.now() % 60_000);
const report = (body: unknown) => api.request('POST', '/sync/edge/report', { headers: { authorization: `Bearer ${EDGE_TOKEN}` }, body });

describe('webhooks', () => {
  it('refuses receivers on our own networks, wrong schemes and unknown event types, with the reason', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data', 'http://localhost:6379/', 'http://[::1]/x', 'http://10.0.0.8/']) {
      const res = await api.request('POST', '/me/webhooks', { key: a.key, body: { url } });
      expect(res.status, url).toBe(422);
      expect(res.body.detail).toMatch(/public addresses only/);
    }
    expect((await api.request('POST', '/me/webhooks', { key: a.key, body: { url: 'ftp://198.51.100.7/' } })).status).toBe(400);
    expect((await api.request('POST', '/me/webhooks', { key: a.key, body: { url: 'https://198.51.100.7/', events: ['backend.exploded'] } })).status).toBe(400);
    expect((await api.request('POST', '/me/webhooks', { key: a.key, body: { url: 'https://198.51.100.7/', extra: 1 } })).status).toBe(400);
    expect((await api.request('GET', '/me/webhooks', { key: a.key })).body).toEqual([]);
  });

  it('creates (secret shown once), lists, reads, tests and deletes; ten at most; another customer sees none', async () => {
    const created = await api.request('POST', '/me/webhooks', { key: a.key, body: { url: 'https://198.51.100.7/hook', events: ['backend.down', 'backend.recovered'], description: 'pager' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/me/webhooks/${created.body.id}`);
    expect(created.body).toMatchObject({ url: 'https://198.51.100.7/hook', events: ['backend.down', 'backend.recovered'], description: 'pager', secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const id = created.body.id as string;
    const listed = await api.request('GET', '/me/webhooks', { key: a.key });
    expect(listed.body).toEqual([expect.objectContaining({ id, url: 'https://198.51.100.7/hook' })]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
    expect((await api.request('GET', `/me/webhooks/${id}`, { key: a.key })).body).not.toHaveProperty('secret');
    for (const method of ['GET', 'DELETE']) expect((await api.request(method, `/me/webhooks/${id}`, { key: b.key })).status).toBe(404);
    expect((await api.request('POST', `/me/webhooks/${id}/test`, { key: b.key })).status).toBe(404);
    expect((await api.request('GET', '/me/webhooks', { key: b.key })).body).toEqual([]);

    const test = await api.request('POST', `/me/webhooks/${id}/test`, { key: a.key });
    expect(test.status).toBe(202);
    expect(test.body).toMatchObject({ webhook: id, state: 'pending', attempts: [], event: { type: 'webhook.test', domain: null } });
    const log = await api.request('GET', `/me/webhooks/${id}/deliveries`, { key: a.key });
    expect(log.body).toEqual([expect.objectContaining({ id: test.body.id, state: 'pending' })]);
    // The test event is the webhook's own: not in the account's events list.
    expect((await api.request('GET', '/me/events', { key: a.key })).body).toEqual([]);

    for (let i = 1; i < 10; i++) expect((await api.request('POST', '/me/webhooks', { key: a.key, body: { url: `https://198.51.100.7/h${i}` } })).status).toBe(201);
    const eleventh = await api.request('POST', '/me/webhooks', { key: a.key, body: { url: 'https://198.51.100.7/h11' } });
    expect(eleventh.status).toBe(422);
    expect(eleventh.body.detail).toMatch(/at most 10 webhooks/);
    expect((await api.request('DELETE', `/me/webhooks/${id}`, { key: a.key })).status).toBe(204);
    expect((await api.request('GET', `/me/webhooks/${id}`, { key: a.key })).status).toBe(404);
    expect((await api.request('GET', `/me/webhooks/${id}/deliveries`, { key: a.key })).status).toBe(404);
    expect((await api.request('POST', '/me/webhooks', { key: a.key, body: { url: 'https://198.51.100.7/again' } })).status).toBe(201);
  });
});

describe('uptime and events from edge reports', () => {
  it('a new domain is unknown, with one period per resolution; another customer gets 404', async () => {
    expect((await api.request('POST', '/domains', { key: a.key, body: { domain: 'watch.example', backend: '198.51.100.1' } })).status).toBe(201);
    const res = await api.request('GET', '/domains/watch.example/uptime', { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ domain: 'watch.example', state: 'unknown', since: null, flapping: false, nodes: {} });
    for (const r of ['minute', 'hour', 'day']) {
      expect(res.body[r].periods.length, r).toBeGreaterThanOrEqual(1);
      expect(res.body[r].periods.length, r).toBeLessThanOrEqual(2);
      expect(res.body[r].summary.availability).toBeNull();
    }
    expect((await api.request('GET', '/domains/watch.example/uptime', { key: b.key })).status).toBe(404);
    expect((await api.request('GET', '/domains/nowhere.example/uptime', { key: a.key })).status).toBe(404);
  });

  it('takes a report on the edge channel only with the node token, and only well-formed', async () => {
    const good = { rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow(), c: 10, u: 10, r: 4, o: 4, ch: { 0: 10 }, rh: { 9: 4 } }] }] };
    expect((await api.request('POST', '/sync/edge/report', { body: good })).status).toBe(401);
    expect((await api.request('POST', '/sync/edge/report', { key: a.key, body: good })).status).toBe(401);
    for (const bad of [
      { rows: [{ domain: 'watch.example', state: 'sideways', measures: [] }] },
      { rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow() + 1, c: 1, u: 1, r: 0, o: 0, ch: {}, rh: {} }] }] },
      { rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow(), c: -1, u: 0, r: 0, o: 0, ch: {}, rh: {} }] }] },
      { rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow(), c: 1, u: 1, r: 0, o: 0, ch: { 400: 1 }, rh: {} }] }] },
    ]) expect((await report(bad)).status, JSON.stringify(bad)).toBe(400);
    const ok = await report(good);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ measures: 1, ignored: 0, verdicts: 1, duplicate: false });
    // The same report sent again (its answer lost): taken once.
    const once = { id: 'report-0001', rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow(), c: 5, u: 5, r: 0, o: 0, ch: {}, rh: {} }] }] };
    expect((await report(once)).body).toMatchObject({ measures: 1, duplicate: false });
    expect((await report(once)).body).toEqual({ measures: 0, ignored: 0, verdicts: 0, duplicate: true });
    // Counts that make no sense (more passed than made, a bucket past the bounds) are ignored, not stored.
    expect((await report({ rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow(), c: 1, u: 2, r: 0, o: 0, ch: {}, rh: { 60: 1 } }] }] })).body).toEqual({ measures: 0, ignored: 1, verdicts: 0, duplicate: false });
    // A minute past the hour retention (48 h), or from a clock far ahead, is ignored (not stored).
    const stale = await report({ rows: [{ domain: 'watch.example', state: 'up', measures: [{ minute: minuteNow() - 49 * 3_600_000, c: 1, u: 1, r: 0, o: 0, ch: {}, rh: {} }, { minute: minuteNow() + 3_600_000, c: 1, u: 1, r: 0, o: 0, ch: {}, rh: {} }] }] });
    expect(stale.body).toEqual({ measures: 0, ignored: 2, verdicts: 0, duplicate: false });
    const u = (await api.request('GET', '/domains/watch.example/uptime', { key: a.key })).body;
    expect(u).toMatchObject({ state: 'up', nodes: { 1: { state: 'up' } } });
    expect(u.minute.summary).toMatchObject({ availability: 100, checks: 15, checks_failed: 0, requests: 4, requests_failed: 0 });
    expect(u.minute.summary.response_ms.p50).toBeGreaterThan(0);
    expect(u.day.summary.checks).toBe(15);
  });

  it('a down verdict raises one event; the same verdict again raises none; the events list pages newest first', async () => {
    const down = { rows: [{ domain: 'watch.example', state: 'down', measures: [{ minute: minuteNow(), c: 3, u: 0, r: 0, o: 0, ch: {}, rh: {} }] }] };
    expect((await report(down)).body).toMatchObject({ verdicts: 1 });
    expect((await report(down)).body).toMatchObject({ verdicts: 0 });
    const events = await api.request('GET', '/me/events', { key: a.key });
    expect(events.body).toEqual([expect.objectContaining({ type: 'backend.down', domain: 'watch.example', data: expect.objectContaining({ state: 'down', nodes: { 1: 'down' } }) })]);
    expect((await api.request('GET', '/domains/watch.example/uptime', { key: a.key })).body.state).toBe('down');
    expect((await report({ rows: [{ domain: 'watch.example', state: 'up', measures: [] }] })).body).toMatchObject({ verdicts: 1 });
    for (let i = 0; i < 3; i++) await api.app.notify.events.emit(a.user.id, 'domain.unserved', 'watch.example', { i });
    const first = await api.request('GET', '/me/events?limit=2', { key: a.key });
    expect(first.body.map((e: { type: string }) => e.type)).toEqual(['domain.unserved', 'domain.unserved']);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1]!;
    const all = [...first.body];
    for (let path: string | undefined = next; path; ) {
      const page: { body: unknown[]; headers: Headers } = await api.request('GET', path, { key: a.key });
      all.push(...page.body);
      path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    }
    expect(all.map((e: { type: string }) => e.type)).toEqual(['domain.unserved', 'domain.unserved', 'domain.unserved', 'backend.recovered', 'backend.down']);
    expect((await api.request('GET', '/me/events', { key: b.key })).body).toEqual([]);
  });

  it('a removed domain leaves nothing: another customer registering the name sees no uptime of it', async () => {
    expect((await api.request('DELETE', '/domains/watch.example', { key: a.key })).status).toBe(204);
    expect((await api.request('POST', '/domains', { key: b.key, body: { domain: 'watch.example', backend: '198.51.100.2' } })).status).toBe(201);
    const u = (await api.request('GET', '/domains/watch.example/uptime', { key: b.key })).body;
    expect(u).toMatchObject({ state: 'unknown', nodes: {} });
    expect(u.day.summary.checks).toBe(0);
    expect(u.minute.summary.checks).toBe(0);
  });
});
