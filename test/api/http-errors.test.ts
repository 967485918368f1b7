import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startApi({ PALISADE_API_BODY_LIMIT: '4096' });
  ({ key } = await api.user());
});
afterAll(() => api.close());

describe('HTTP-level errors are problem+json and change nothing', () => {
  it('400 for malformed JSON', async () => {
    const res = await api.request('POST', '/domains', { key, raw: '{"domain": "a.example",', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.contentType).toContain('application/problem+json');
    expect(res.body.code).toBe('MALFORMED_JSON');
  });

  it('400 for a JSON body that is not an object', async () => {
    const res = await api.request('POST', '/domains', { key, body: ['a.example'] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION');
  });

  it('413 for a body over the limit', async () => {
    const res = await api.request('POST', '/domains', { key, body: { domain: 'big.example', backend: '198.51.100.1', mask: 'a,'.repeat(4000) } });
    expect(res.status).toBe(413);
    expect(res.contentType).toContain('application/problem+json');
  });

  it('415 for a body that is not JSON', async () => {
    const res = await api.request('POST', '/domains', { key, raw: 'domain=a.example', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(res.body.detail).toBe('Content-Type application/x-www-form-urlencoded is not accepted: send JSON with `Content-Type: application/json`');
  });

  it('415 for a body without a type, and on zone-file routes the type they take', async () => {
    const none = await fetch(`${api.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key }, body: new Uint8Array([123, 125]) });
    expect(none.status).toBe(415);
    expect(((await none.json()) as { detail: string }).detail).toContain('`Content-Type: application/json`');
    await api.request('POST', '/domains', { key, body: { domain: 'types.example', backend: '198.51.100.1' } });
    const form = await api.request('POST', '/domains/types.example/zonefile', { key, raw: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect(form.body.detail).toContain('`Content-Type: text/dns`');
    const json = await api.request('POST', '/domains/types.example/zonefile', { key, body: { a: 1 } });
    expect(json.status).toBe(415);
    expect(json.body.detail).toContain('`Content-Type: text/dns`');
  });

  it('404 problem for unknown routes; 400 for bad query parameters', async () => {
    const res = await api.request('GET', '/nothing/here', { key });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    const bad = await api.request('GET', '/domains?limit=0', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('querystring.limit');
    expect((await api.request('GET', '/domains?bogus=1', { key })).status).toBe(400);
  });

  it('accepts every path with and without the trailing slash', async () => {
    for (const p of ['/me', '/me/', '/domains', '/domains/', '/nodes', '/nodes/', '/security/iplist', '/security/iplist/']) {
      expect((await api.request('GET', p, { key })).status, p).toBe(200);
    }
  });

  it('a PUT with a JSON content type and no body is fine', async () => {
    const list = (await api.request('POST', '/security/iplist', { key, body: { name: 'x' } })).body;
    const res = await api.request('PUT', `/security/iplist/${list.id}/192.0.2.1`, { key, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
  });
});
