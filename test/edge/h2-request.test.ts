// The HTTP/1.1 view of an h2 request's header block (front/h2-request.ts), without sockets: what
// it refuses (what HTTP/1.1 could not carry, or would carry with another meaning) and what it gives.
import { describe, expect, it } from 'vitest';
import { h2RequestView } from '../../src/edge/front/h2-request.ts';

const base = { ':method': 'GET', ':scheme': 'https', ':authority': 'alpha.test', ':path': '/x?y=1' };

describe('the HTTP/1.1 view of an h2 request', () => {
  it('moves :authority to Host and leaves the pseudo-headers out', () => {
    expect(h2RequestView({ ...base, accept: '*/*' }, false)).toEqual({ ok: true, headers: { accept: '*/*', host: 'alpha.test' }, rawHeaders: ['accept', '*/*', 'host', 'alpha.test'] });
  });

  it('announces a body without content-length as chunked, one with it as it is', () => {
    expect(h2RequestView({ ...base, ':method': 'POST' }, true)).toMatchObject({ ok: true, headers: { 'transfer-encoding': 'chunked' } });
    const sized = h2RequestView({ ...base, ':method': 'POST', 'content-length': '5' }, true);
    expect(sized).toMatchObject({ ok: true, headers: { 'content-length': '5' } });
    expect(sized.ok && sized.headers['transfer-encoding']).toBeUndefined();
  });

  it('keeps a host that agrees with :authority (in any case)', () => {
    expect(h2RequestView({ ...base, host: 'Alpha.Test' }, false)).toMatchObject({ ok: true, headers: { host: 'Alpha.Test' } });
  });

  it.each([
    ['connection-specific header', { ...base, connection: 'keep-alive' }, false],
    ['transfer-encoding', { ...base, 'transfer-encoding': 'chunked' }, true],
    ['keep-alive', { ...base, 'keep-alive': '5' }, false],
    ['upgrade', { ...base, upgrade: 'websocket' }, false],
    ['te other than trailers', { ...base, te: 'gzip' }, false],
    ['upper-case name', { ...base, 'X-Upper': '1' }, false],
    ['CR/LF in a value', { ...base, 'x-a': 'a\r\nx-b: 1' }, false],
    ['NUL in a value', { ...base, 'x-a': 'a\0' }, false],
    [':path without /', { ...base, ':path': 'x' }, false],
    ['* for another method than OPTIONS', { ...base, ':path': '*' }, false],
    ['unknown pseudo-header', { ...base, ':protocol': 'websocket' }, false],
    ['missing :method', { ':scheme': 'https', ':authority': 'a.test', ':path': '/' }, false],
    ['unknown :scheme', { ...base, ':scheme': 'ftp' }, false],
    [':authority and host disagreeing', { ...base, host: 'bravo.test' }, false],
    ['repeated host', { ...base, host: ['alpha.test', 'alpha.test'] }, false],
    ['malformed content-length', { ...base, 'content-length': '5, 5' }, true],
    ['content-length with no body', { ...base, 'content-length': '5' }, false],
  ] as const)('refuses %s', (_, headers, body) => {
    expect(h2RequestView(headers as Record<string, string | string[]>, body).ok).toBe(false);
  });

  it('takes OPTIONS *', () => {
    expect(h2RequestView({ ...base, ':method': 'OPTIONS', ':path': '*' }, false).ok).toBe(true);
  });
});
