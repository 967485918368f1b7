// Which requests the edge's cache may answer and under which key, and how long a response may be
// kept — Cloudflare's cache levels as ../../../docs/edge.md defines them. Pure: no I/O.
//   0 off · 1 basic: static files only without a query string · 2 simplified: static files, the
//   query string left out of the key · 3 aggressive: static files, the full query in the key.
// Never from the cache: other methods, requests with Authorization or a Range on a miss (passed
// through); never stored: Cache-Control private/no-store/no-cache/max-age=0, any Set-Cookie,
// Vary: *, a response whose Content-Type is not what the extension claims (cache deception:
// `/account/profile.css` answered with the account's HTML page), a response to a request that
// carried a cookie unless it says `public`. The scheme is part of the key. Freshness from
// s-maxage/max-age/Expires (shared cache, no heuristics), else the defaults by status.
import type { IncomingHttpHeaders } from 'node:http';
import CachePolicy from 'http-cache-semantics';
import { CLEARANCE_COOKIE } from '../protect/challenge.ts';

/** Cloudflare's default cached extensions (its list, HTML excluded). */
const STATIC_EXTENSIONS = new Set(
  (
    '7z avi avif apk bin bmp bz2 class css csv doc docx dmg ejs eot eps exe flac gif gz ico iso jar jpg jpeg js mid midi mkv mp3 mp4 ogg otf pdf pict pls png ppt pptx ps rar svg svgz swf tar tif tiff ttf webm webp woff woff2 xls xlsx zip zst'
  ).split(' '),
);

const IMAGE = (type: string) => type.startsWith('image/');
const FONT = (type: string) => type.startsWith('font/') || /^application\/(font-|x-font-|vnd\.ms-fontobject$|octet-stream$)/.test(type);
const MEDIA = (type: string) => type.startsWith('audio/') || type.startsWith('video/') || type === 'application/ogg' || type === 'application/octet-stream';
const SCRIPT = (type: string) => /^(text|application)\/(x-)?(javascript|ecmascript)$/.test(type);
/** Files that are data, not pages: any application/ type but the ones a browser runs as a page or reads as data of the site. */
const BINARY = (type: string) => type.startsWith('application/') && !/^application\/(xhtml\+xml|json|.*\+json|xml|javascript|x-javascript|ecmascript)$/.test(type);

/** What each cached extension may be answered with ("cache deception armor"): never a page of the site. */
const EXPECTED_TYPE: Record<string, (type: string) => boolean> = {
  css: (type) => type === 'text/css',
  js: SCRIPT,
  ejs: SCRIPT,
  csv: (type) => type === 'text/csv' || type === 'text/plain' || type === 'application/csv',
  svg: IMAGE,
  svgz: IMAGE,
  ...Object.fromEntries('avif bmp gif ico jpeg jpg pict png tif tiff webp'.split(' ').map((e) => [e, IMAGE])),
  ...Object.fromEntries('eot otf ttf woff woff2'.split(' ').map((e) => [e, FONT])),
  ...Object.fromEntries('avi flac mid midi mkv mp3 mp4 ogg webm'.split(' ').map((e) => [e, MEDIA])),
  ...Object.fromEntries('doc docx eps pdf ppt pptx ps xls xlsx'.split(' ').map((e) => [e, BINARY])),
  ...Object.fromEntries('7z apk bin bz2 class dmg exe gz iso jar pls rar swf tar zip zst'.split(' ').map((e) => [e, BINARY])),
};

/** Whether a response's Content-Type is what the requested file's extension claims. */
export function typeMatchesExtension(extension: string, contentType: string | string[] | undefined): boolean {
  const type = String(contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const expected = EXPECTED_TYPE[extension];
  return type !== '' && expected !== undefined && expected(type);
}

/**
 * Whether a request carried a cookie of the site's: the edge's own clearance cookie (the JS
 * challenge's) says nothing of the visitor to the backend and does not count.
 */
function carriesCookie(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  return String(header)
    .split(';')
    .some((pair) => {
      const name = pair.split('=')[0]!.trim();
      return name !== '' && name !== CLEARANCE_COOKIE;
    });
}

/** Default lifetimes (ms) of responses without explicit freshness, by status (Cloudflare's). */
const DEFAULT_TTL_MS: Record<number, number> = { 200: 7_200_000, 206: 7_200_000, 301: 7_200_000, 302: 1_200_000, 303: 1_200_000, 404: 180_000, 410: 180_000 };

export type CacheDecision = { cache: false; reason: string } | { cache: true; key: string };

/** The extension of the URL path's last segment, lower case ('' when none). */
export function extensionOf(path: string): string {
  const last = path.slice(path.lastIndexOf('/') + 1);
  const dot = last.lastIndexOf('.');
  return dot <= 0 ? '' : last.slice(dot + 1).toLowerCase();
}

/** Whether the request may be answered from (or fill) the cache, and its key. */
export function cacheDecision(level: number, method: string, scheme: 'http' | 'https', host: string, url: string, headers: IncomingHttpHeaders): CacheDecision {
  if (level <= 0) return { cache: false, reason: 'caching off' };
  if (method !== 'GET' && method !== 'HEAD') return { cache: false, reason: 'method' };
  if (headers.authorization !== undefined) return { cache: false, reason: 'authorization' };
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  if (!STATIC_EXTENSIONS.has(extensionOf(path))) return { cache: false, reason: 'not a static file' };
  // `/account.php;x.css`, `/account.php%2Fx.css`: a path the backend may read as another file than
  // the extension says (path parameters, encoded separators) is no static file.
  if (path.includes(';') || /%(2f|5c|3b|00)/i.test(path) || path.includes('\\')) return { cache: false, reason: 'ambiguous path' };
  if (level === 1 && query !== '') return { cache: false, reason: 'query string' };
  const keyed = level === 3 && query !== '' ? `${path}?${query}` : path;
  return { cache: true, key: `${scheme}://${host}\n${keyed}` };
}

/** Accept-Encoding reduced to what a variant depends on, so that every browser does not get its own copy. */
export function normalisedAcceptEncoding(value: string | string[] | undefined): string {
  const text = String(value ?? '').toLowerCase();
  return /\bbr\b/.test(text) ? 'br' : /\bgzip\b/.test(text) ? 'gzip' : '';
}

/** The request header values a stored variant is chosen by (its response's Vary), as one string. */
export function variantKey(vary: readonly string[], headers: IncomingHttpHeaders): string {
  return vary.map((name) => (name === 'accept-encoding' ? normalisedAcceptEncoding(headers[name]) : String(headers[name] ?? ''))).join('\n');
}

export type Storability = { store: false; reason: string } | { store: true; ttlMs: number; vary: string[]; policy: CachePolicy };

/** Whether a response may be stored, for how long, and by which request headers it varies. */
export function storability(req: { method: string; url: string; headers: IncomingHttpHeaders }, status: number, headers: IncomingHttpHeaders): Storability {
  if (headers['set-cookie'] !== undefined) return { store: false, reason: 'set-cookie' };
  const cc = String(headers['cache-control'] ?? '').toLowerCase();
  const path = req.url.split('?')[0]!;
  // Redirects carry their meaning in Location; anything else must be what its name claims.
  if ((status < 300 || status > 399) && !typeMatchesExtension(extensionOf(path), headers['content-type'])) return { store: false, reason: 'content-type does not match the extension' };
  // A request with a cookie may have been answered for that visitor alone; only the backend's
  // word (`public`) makes it everyone's.
  if (carriesCookie(req.headers.cookie) && !/(^|[\s,])public\b/.test(cc)) return { store: false, reason: 'cookie' };
  if (/(^|[\s,])(private|no-store|no-cache)\b/.test(cc) || /(^|[\s,])(s-)?max-age\s*=\s*"?0+"?(\s*(,|$))/.test(cc)) return { store: false, reason: 'cache-control' };
  const vary = String(headers.vary ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (vary.includes('*')) return { store: false, reason: 'vary *' };
  const policy = new CachePolicy({ method: req.method, url: req.url, headers: req.headers }, { status, headers }, { shared: true, cacheHeuristic: 0, immutableMinTimeToLive: 0 });
  const explicit = /(^|[\s,])(s-maxage|max-age)\s*=/.test(cc) || headers.expires !== undefined;
  // Without explicit freshness, Cloudflare's defaults by status (302/303 included, which HTTP
  // itself would not keep without it).
  if (explicit && !policy.storable()) return { store: false, reason: 'not storable' };
  const ttlMs = explicit ? policy.timeToLive() : (DEFAULT_TTL_MS[status] ?? 0);
  if (ttlMs <= 0) return { store: false, reason: explicit ? 'expired' : `status ${status}` };
  return { store: true, ttlMs, vary: [...new Set(vary)].sort(), policy };
}
