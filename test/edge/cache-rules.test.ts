// The cache's rules as pure functions: which requests are cacheable under which key, and which
// responses may be stored for how long (docs/edge.md).
import { describe, expect, it } from 'vitest';
import { cacheDecision, extensionOf, normalisedAcceptEncoding, storability, variantKey } from '../../src/edge/cache/cache-rules.ts';

const req = { method: 'GET', url: '/a.css', headers: {} };

describe('cache rules', () => {
  it('keys static files by level; never HTML, other methods or Authorization', () => {
    expect(cacheDecision(0, 'GET', 'https', 'h', '/a.css', {})).toEqual({ cache: false, reason: 'caching off' });
    expect(cacheDecision(1, 'GET', 'https', 'h', '/a.css', {})).toEqual({ cache: true, key: 'https://h\n/a.css' });
    expect(cacheDecision(1, 'GET', 'https', 'h', '/a.css?v=1', {})).toMatchObject({ cache: false, reason: 'query string' });
    expect(cacheDecision(2, 'GET', 'https', 'h', '/a.css?v=1', {})).toEqual({ cache: true, key: 'https://h\n/a.css' });
    expect(cacheDecision(3, 'GET', 'https', 'h', '/a.css?v=1', {})).toEqual({ cache: true, key: 'https://h\n/a.css?v=1' });
    expect(cacheDecision(3, 'HEAD', 'https', 'h', '/IMG/Photo.JPG', {})).toMatchObject({ cache: true });
    for (const url of ['/', '/index.html', '/page', '/dir.css/', '/.css']) expect(cacheDecision(3, 'GET', 'https', 'h', url, {}).cache, url).toBe(false);
    expect(cacheDecision(3, 'POST', 'https', 'h', '/a.css', {}).cache).toBe(false);
    expect(cacheDecision(3, 'GET', 'https', 'h', '/a.css', { authorization: 'Basic x' }).cache).toBe(false);
    expect(extensionOf('/a/b.tar.gz')).toBe('gz');
  });

  it('stores by Cache-Control, Set-Cookie and Vary, with explicit freshness or the defaults by status', () => {
    const store = (status: number, headers: Record<string, string>) => storability(req, status, { 'content-type': 'text/css', ...headers });
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

  it('keys by scheme: an answer over http is never a hit over https', () => {
    const http = cacheDecision(3, 'GET', 'http', 'h', '/a.css', {});
    const https = cacheDecision(3, 'GET', 'https', 'h', '/a.css', {});
    expect(http.cache && https.cache && http.key !== https.key).toBe(true);
  });

  it('refuses cache deception: a page under a static name, path parameters, encoded separators', () => {
    // The extension claims a style sheet; the backend answered its account page.
    expect(storability({ method: 'GET', url: '/acct/profile.css', headers: {} }, 200, { 'content-type': 'text/html; charset=utf-8' })).toMatchObject({ store: false });
    expect(storability({ method: 'GET', url: '/acct/profile.css', headers: {} }, 200, {})).toMatchObject({ store: false });
    expect(storability({ method: 'GET', url: '/logo.png', headers: {} }, 200, { 'content-type': 'application/json' })).toMatchObject({ store: false });
    expect(storability({ method: 'GET', url: '/app.js', headers: {} }, 200, { 'content-type': 'text/html' })).toMatchObject({ store: false });
    for (const [url, type] of [['/a.css', 'text/css'], ['/app.js', 'application/javascript'], ['/img/x.JPG', 'image/jpeg'], ['/f.woff2', 'font/woff2'], ['/doc.pdf', 'application/pdf'], ['/a.zip', 'application/zip']] as const) {
      expect(storability({ method: 'GET', url, headers: {} }, 200, { 'content-type': type }).store, url).toBe(true);
    }
    for (const url of ['/acct.php;x.css', '/acct.php%2Fx.css', '/acct.php%2fx.css', '/acct%5cx.css', '/a%00.css']) expect(cacheDecision(3, 'GET', 'https', 'h', url, {}).cache, url).toBe(false);
  });

  it('stores an answer to a request with a cookie only when it says public', () => {
    const withCookie = { method: 'GET', url: '/a.css', headers: { cookie: 'session=secret' } };
    expect(storability(withCookie, 200, { 'content-type': 'text/css' })).toMatchObject({ store: false, reason: 'cookie' });
    expect(storability(withCookie, 200, { 'content-type': 'text/css', 'cache-control': 'max-age=60' })).toMatchObject({ store: false, reason: 'cookie' });
    expect(storability(withCookie, 200, { 'content-type': 'text/css', 'cache-control': 'public, max-age=60' })).toMatchObject({ store: true });
    // The edge's own clearance cookie (the JS challenge's) is not the site's.
    expect(storability({ method: 'GET', url: '/a.css', headers: { cookie: '__palisade_clearance=x.y' } }, 200, { 'content-type': 'text/css' })).toMatchObject({ store: true });
    expect(storability({ method: 'GET', url: '/a.css', headers: { cookie: '__palisade_clearance=x.y; sid=1' } }, 200, { 'content-type': 'text/css' })).toMatchObject({ store: false });
  });

  it('reduces Accept-Encoding to what a variant depends on', () => {
    expect(normalisedAcceptEncoding('gzip, deflate, br')).toBe('br');
    expect(normalisedAcceptEncoding('deflate, gzip;q=1.0')).toBe('gzip');
    expect(normalisedAcceptEncoding(undefined)).toBe('');
    expect(variantKey(['accept-encoding', 'accept-language'], { 'accept-encoding': 'gzip', 'accept-language': 'de' })).toBe('gzip\nde');
  });
});
