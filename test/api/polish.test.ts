// API polish a demanding user noticed: every offending field at once, problem+json for every
// error (414, 431, 404, 405 with Allow, 415), unknown query parameters refused everywhere, every
// list paged alike, single-record and single-list reads, type mnemonics, and request ids that
// come back and name every log line (with the user id for writes).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.ts';
import { generateApiKey, hashApiKey } from '../../src/model/user.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import type { FastifyInstance } from 'fastify';
import { testConfig } from '../helpers/config.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let app: FastifyInstance;
let store: Store;
let url: string;
let key: string;
let userId: number;
const lines: Array<Record<string, unknown>> = [];

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(url + path, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });

beforeAll(async () => {
  const dataDir = tempDir();
  store = openStore({ dataDir });
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  app = await buildApp({ store, config: testConfig(dataDir), logger: pino({ level: 'info' }, sink) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const user = await store.createUser({ name: 'p', email: 'p@example.org' });
  userId = user.id;
  key = generateApiKey();
  await store.addApiKey(user.id, hashApiKey(key), 't');
  await store.createNode({ name: 'a', ipv4: '192.0.2.1', ipv6: null, location: 'DE', status: 'active' });
  await store.createNode({ name: 'b', ipv4: '192.0.2.2', ipv6: null, location: 'FR', status: 'active' });
  await store.createNode({ name: 'c', ipv4: '192.0.2.3', ipv6: null, location: 'US', status: 'active' });
});
afterAll(async () => {
  await app.close();
  await store.close();
});

const problemOf = async (res: Response) => {
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  return (await res.json()) as { code: string; errors: Array<{ field: string }> };
};

describe('errors', () => {
  it('name every offending field at once: schema errors and value checks together', async () => {
    const res = await call('POST', '/domains', { domain: 'merge.example', backend: 'not-an-ip', cachelevel: 9, geolist: ['XX'] });
    expect(res.status).toBe(400);
    const fields = (await problemOf(res)).errors.map((e) => e.field).sort();
    expect(fields).toEqual(['backend', 'cachelevel', 'geolist.0']);
    await call('POST', '/domains', { domain: 'merge.example', backend: '198.51.100.1' });
    const patch = await call('PATCH', '/domains/merge.example', { bwlimit: -1, failover: 'nope' });
    expect((await problemOf(patch)).errors.map((e) => e.field).sort()).toEqual(['bwlimit', 'failover']);
    const list = await call('POST', '/security/iplist', { name: 'x'.repeat(200), ips: ['bad'] });
    expect((await problemOf(list)).errors.map((e) => e.field).sort()).toEqual(['ips.0', 'name']);
    const record = await call('POST', '/domains/merge.example/dnsrecords', { name: 'www', type: 1, value: '999.1.1.1', ttl: 5 });
    expect((await problemOf(record)).errors.map((e) => e.field).sort()).toEqual(['ttl', 'value']);
  });

  it('are problem+json everywhere: 414, 431, 404, 405 with Allow, 415', async () => {
    const long = await call('GET', `/domains/${'a'.repeat(400)}`);
    expect(long.status).toBe(414);
    expect((await problemOf(long)).code).toBe('URI_TOO_LONG');
    const huge = await call('GET', `/domains?tag=${'a'.repeat(20_000)}`);
    expect(huge.status).toBe(431);
    expect((await problemOf(huge)).code).toBe('HEADERS_TOO_LARGE');
    expect((await call('GET', '/no/such/thing')).status).toBe(404);
    const wrong = await call('PUT', '/domains/merge.example', { ssl: true });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH');
    expect((await problemOf(wrong)).code).toBe('METHOD_NOT_ALLOWED');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await call('POST', '/domains', 'domain=x', { 'content-type': type });
      expect(res.status, type).toBe(415);
      expect((await problemOf(res)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('refuse unknown query parameters on every route', async () => {
    for (const path of ['/me?x=1', '/nodes?x=1', '/domains/merge.example?x=1', '/domains/merge.example/dnsrecords?x=1', '/security/iplist?x=1', '/geo/targets?x=1', '/domains/merge.example/activatens?x=1']) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(400);
      expect((await problemOf(res)).errors[0]!.field).toBe('querystring.x');
    }
  });
});

describe('resources', () => {
  it('/nodes/ pages like every list', async () => {
    const first = await call('GET', '/nodes?limit=2');
    expect(((await first.json()) as unknown[]).length).toBe(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toBeDefined();
    const rest = (await (await call('GET', next!)).json()) as Array<{ name: string }>;
    expect(rest.map((n) => n.name)).toEqual(['c']);
  });

  it('one record and one IP list can be read alone; another user gets 404', async () => {
    const created = (await (await call('POST', '/domains/merge.example/dnsrecords', { name: 'mail', type: 'MX', value: 'mx.example.net', priority: 10 })).json()) as { id: number; type: number; type_name: string };
    expect(created).toMatchObject({ type: 4, type_name: 'MX' });
    const one = await call('GET', `/domains/merge.example/dnsrecords/${created.id}`);
    expect(await one.json()).toMatchObject({ id: created.id, name: 'mail', type: 4, value: 'mx.example.net' });
    expect((await call('GET', `/domains/merge.example/dnsrecords/${created.id + 1000}`)).status).toBe(404);
    expect(((await (await call('GET', '/domains/merge.example/dnsrecords?type=mx')).json()) as unknown[]).length).toBe(1);
    const list = (await (await call('POST', '/security/iplist', { name: 'office', ips: ['192.0.2.9'] })).json()) as { id: number };
    expect(await (await call('GET', `/security/iplist/${list.id}`)).json()).toMatchObject({ id: list.id, name: 'office', ips: ['192.0.2.9'] });
    const other = generateApiKey();
    const intruder = await store.createUser({ name: 'i', email: 'i@example.org' });
    await store.addApiKey(intruder.id, hashApiKey(other), 't');
    expect((await call('GET', `/security/iplist/${list.id}`, undefined, { 'x-auth-key': other })).status).toBe(404);
    expect((await call('GET', `/domains/merge.example/dnsrecords/${created.id}`, undefined, { 'x-auth-key': other })).status).toBe(404);
    expect((await call('POST', '/domains/merge.example/dnsrecords', { name: 'x', type: 'SPF', value: 'v' })).status).toBe(400);
  });
});

describe('request ids and the audit trail', () => {
  it('echo a client X-Request-Id (or make one), name every log line of the request with it, and log the user of a write', async () => {
    const res = await call('PATCH', '/domains/merge.example', { ssl: true }, { 'x-request-id': 'trace-abc-123' });
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
    const made = await call('GET', '/me');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const ofTrace = () => lines.filter((l) => l.reqId === 'trace-abc-123');
    await until('the request\'s last log line', () => ofTrace().some((l) => l.msg === 'request completed')).catch(() => undefined);
    const mine = ofTrace();
    expect(mine.length).toBeGreaterThanOrEqual(1);
    expect(mine.find((l) => l.msg === 'request completed')).toMatchObject({ userId, req: { method: 'PATCH', url: '/domains/merge.example' }, res: { statusCode: 200 } });
    // A header that is no sane id is replaced.
    const odd = await call('GET', '/me', undefined, { 'x-request-id': 'has space' });
    expect(odd.headers.get('x-request-id')).not.toBe('has space');
  });
});
