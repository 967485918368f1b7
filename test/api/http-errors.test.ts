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

  it('a wrong value is told what is accepted, in words: record type names, lists, URLs, country codes', async () => {
    await api.request('POST', '/domains', { key, body: { domain: 'words.example', backend: '198.51.100.1' } });
    const type = await api.request('POST', '/domains/words.example/dnsrecords', { key, body: { name: 'www', type: 'XYZ', value: '192.0.2.1' } });
    expect(type.status).toBe(400);
    expect(type.body.errors).toEqual([{ field: 'type', message: 'must be a record type, by name or number: A (1), AAAA (2), CNAME (3), MX (4), NS (5), TXT (6), SOA (7), SRV (8), PTR (12), NAPTR (35), DS (43), SSHFP (44), TLSA (52), SVCB (64), HTTPS (65), CAA (257)' }]);
    const number = await api.request('POST', '/domains/words.example/dnsrecords', { key, body: { name: 'www', type: 99, value: '192.0.2.1' } });
    expect(number.body.errors[0].message).toContain('A (1), AAAA (2)');
    const exclusions = await api.request('PATCH', '/domains/words.example', { key, body: { waf_exclusions: '942100' } });
    expect(exclusions.body.errors).toEqual([{ field: 'waf_exclusions', message: expect.stringContaining('must be a list of exclusions, each {"rule": 942100') }]);
    const geolist = await api.request('PATCH', '/domains/words.example', { key, body: { geolist: ['Germany'] } });
    expect(geolist.body.errors).toEqual([{ field: 'geolist.0', message: 'must be a two-letter ISO 3166-1 country code ("DE", "us")' }]);
    const hook = await api.request('POST', '/me/webhooks', { key, body: { url: 'ftp://hooks.example.com/x', events: ['domain.created'] } });
    expect(hook.status).toBe(400);
    const urlError = hook.body.errors.find((e: { field: string }) => e.field === 'url');
    expect(urlError.message).toBe('must be an http:// or https:// URL, such as "https://hooks.example.com/palisade"');
    expect(JSON.stringify(hook.body)).not.toContain('^https?');
    const ttl = await api.request('POST', '/domains/words.example/dnsrecords', { key, body: { name: 'www', type: 'A', value: '192.0.2.1', ttl: '300' } });
    expect(ttl.body.errors).toEqual([{ field: 'ttl', message: 'must be a whole number' }]);
  });

  it('JSON answers end with a newline (a shell prompt after curl starts on its own line)', async () => {
    for (const [path, options] of [['/me', { headers: { 'x-auth-key': key } }], ['/nothing', { headers: { 'x-auth-key': key } }], ['/domains', { headers: { 'x-auth-key': key } }]] as const) {
      const res = await fetch(api.url + path, options);
      const text = await res.text();
      expect(text.endsWith('}\n') || text.endsWith(']\n'), `${path}: ${text.slice(-20)}`).toBe(true);
      expect(Number(res.headers.get('content-length') ?? text.length)).toBe(Buffer.byteLength(text));
    }
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
