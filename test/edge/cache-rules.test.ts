// The cache's rules as pure functions: which requests are cacheable under which key, and which
// responses may be stored for how long (docs/edge.md).
import { describe, expect, it } from 'vitest';
import { cacheDecision, extensionOf, normalisedAcceptEncoding, storability, variantKey } from '../../src/edge/cache/cache-rules.ts';

const req = { method: 'GET', url: '/a.css', headers: {} };

describe('cache rules', () => {
  it('keys static files by level; never HTML, other methods or Authorization', () => {
    expect(cacheDecision(0, 'GET', 'h', '/a.css', {})).toEqual({ cache: false, reason: 'caching off' });
    expect(cacheDecision(1, 'GET', 'h', '/a.css', {})).toEqual({ cache: true, key: 'h\n/a.css' });
    expect(cacheDecision(1, 'GET', 'h', '/a.css?v=1', {})).toMatchObject({ cache: false, reason: 'query string' });
    expect(cacheDecision(2, 'GET', 'h', '/a.css?v=1', {})).toEqual({ cache: true, key: 'h\n/a.css' });
    expect(cacheDecision(3, 'GET', 'h', '/a.css?v=1', {})).toEqual({ cache: true, key: 'h\n/a.css?v=1' });
    expect(cacheDecision(3, 'HEAD', 'h', '/IMG/Photo.JPG', {})).toMatchObject({ cache: true });
    for (const url of ['/', '/index.html', '/page', '/dir.css/', '/.css']) expect(cacheDecision(3, 'GET', 'h', url, {}).cache, url).toBe(false);
    expect(cacheDecision(3, 'POST', 'h', '/a.css', {}).cache).toBe(false);
    expect(cacheDecision(3, 'GET', 'h', '/a.css', { authorization: 'Basic x' }).cache).toBe(false);
    expect(extensionOf('/a/b.tar.gz')).toBe('gz');
  });

  it('stores by Cache-Control, Set-Cookie and Vary, with explicit freshness or the defaults by status', () => {
    const store = (status: number, headers: Record<string, string>) => storability(req, status, headers);
    expect(store(200, {})).toMatchObject({ store: true, ttlMs: 7_200_000 });
    expect(store(302, {})).toMatchObject({ store: true, ttlMs: 1_200_000 });
    expect(store(404, {})).toMatchObject({ store: true, ttlMs: 180_000 });
    expect(store(500, {})).toMatchObject({ store: false });
    // Explicit lifetimes count from the response's arrival (a millisecond may have passed).
    expect(store(200, { 'cache-control': 'max-age=60' })).toMatchObject({ store: true, ttlMs: expect.closeTo(60_000, -2) });
    expect(store(200, { 'cache-control': 'max-age=60, s-maxage=5' })).toMatchObject({ store: true, ttlMs: expect.closeTo(5_000, -2) });
    for (const cc of ['private', 'no-store', 'no-cache', 'max-age=0', 'public, max-age=0', 's-maxage=0']) expect(store(200, { 'cache-control': cc }).store, cc).toBe(false);
    expect(store(200, { 'set-cookie': 'a=b' }).store).toBe(false);
    expect(store(200, { vary: '*' }).store).toBe(false);
    expect(store(200, { vary: 'Accept-Encoding, Accept-Language' })).toMatchObject({ store: true, vary: ['accept-encoding', 'accept-language'] });
    expect(store(200, { expires: new Date(Date.now() - 1000).toUTCString() }).store).toBe(false);
  });

  it('reduces Accept-Encoding to what a variant depends on', () => {
    expect(normalisedAcceptEncoding('gzip, deflate, br')).toBe('br');
    expect(normalisedAcceptEncoding('deflate, gzip;q=1.0')).toBe('gzip');
    expect(normalisedAcceptEncoding(undefined)).toBe('');
    expect(variantKey(['accept-encoding', 'accept-language'], { 'accept-encoding': 'gzip', 'accept-language': 'de' })).toBe('gzip\nde');
  });
});
