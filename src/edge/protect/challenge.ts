// `sjschallenge`: a proof-of-work interstitial, as Anubis does it. Without a valid clearance
// cookie, an HTML navigation gets 503 and a page whose worker finds a nonce such that
// SHA-256(challenge + nonce) starts with `difficulty` hex zeros; other requests get 503 JSON and
// no work. The challenge is HMAC-signed (domain, client prefix, expiry ≤ 5 min, random) and
// accepted once; the server checks one hash and sets an HttpOnly, SameSite=Lax cookie (Secure over
// https) signed over the domain, the client's /24 (IPv4) or /64 (IPv6) and its expiry, then sends
// the browser back to the same-host path it came from. Proof of work prices access; it does not
// tell humans from machines.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { lruByCount } from '../lru-by-count.ts';
import { addressKey } from './ip-ranges.ts';

export const VERIFY_PATH = '/.palisade/challenge';
export const CLEARANCE_COOKIE = '__palisade_clearance';
const COOKIE = CLEARANCE_COOKIE;
const CHALLENGE_TTL_MS = 5 * 60_000;
/** Accepted challenges remembered (until they expire) so that none is accepted twice. */
const MAX_USED = 1_000_000;

export interface ChallengeOptions {
  secret: Buffer;
  difficulty: number;
  cookieMinutes: number;
}

const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** The client's network for binding: IPv4 /24, IPv6 /64. */
export function clientPrefix(address: string): string | undefined {
  const key = addressKey(address);
  if (!key) return undefined;
  return key.family === 4 ? `4:${Math.floor(key.key / 256)}` : `6:${key.key.slice(0, 16)}`;
}

export type Verdict = { ok: true; cookie: string; returnTo: string } | { ok: false; reason: string };

export class Challenges {
  private readonly used = new Map<string, number>();
  /** Clearance cookies already verified (signature and shape): a cleared visitor costs a lookup per request. */
  private readonly verified = lruByCount<string, { d: string; p: string; e: number }>(100_000);

  constructor(private readonly options: ChallengeOptions) {}

  get difficulty(): number {
    return this.options.difficulty;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.options.secret).update(payload).digest('base64url');
  }

  private signed(value: object): string {
    const payload = b64(JSON.stringify(value));
    return `${payload}.${this.sign(payload)}`;
  }

  /** The decoded value when the signature holds, else undefined. */
  private opened<T>(token: string): T | undefined {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 1024) return undefined;
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.sign(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString()) as T;
    } catch {
      return undefined;
    }
  }

  /** Whether the request carries a valid clearance for this domain from this client's network. */
  cleared(cookieHeader: string | undefined, domain: string, client: string): boolean {
    if (!cookieHeader) return false;
    const prefix = clientPrefix(client);
    for (const part of cookieHeader.split(';')) {
      const eq = part.indexOf('=');
      if (eq === -1 || part.slice(0, eq).trim() !== COOKIE) continue;
      const token = part.slice(eq + 1).trim();
      let value = this.verified.get(token);
      if (!value) {
        const opened = this.opened<{ k: string; d: string; p: string; e: number }>(token);
        if (opened?.k !== 'clearance') continue;
        value = { d: opened.d, p: opened.p, e: opened.e };
        this.verified.set(token, value);
      }
      if (value.d === domain && value.p === prefix && value.e > Date.now()) return true;
    }
    return false;
  }

  /** A fresh challenge for this domain and client network. */
  issue(domain: string, client: string): string {
    return this.signed({ k: 'challenge', d: domain, p: clientPrefix(client) ?? '', e: Date.now() + CHALLENGE_TTL_MS, r: randomBytes(12).toString('base64url') });
  }

  /** Checks a solved challenge (once) and makes the clearance cookie. */
  verify(challenge: string, nonce: string, returnTo: string, domain: string, client: string, secure: boolean): Verdict {
    const value = this.opened<{ k: string; d: string; p: string; e: number; r: string }>(challenge);
    if (!value || value.k !== 'challenge') return { ok: false, reason: 'not a challenge of ours' };
    if (value.d !== domain) return { ok: false, reason: 'a challenge for another site' };
    if (value.p !== clientPrefix(client)) return { ok: false, reason: 'a challenge for another network' };
    if (value.e <= Date.now()) return { ok: false, reason: 'the challenge expired' };
    if (!/^\d{1,12}$/.test(nonce)) return { ok: false, reason: 'no nonce' };
    const hash = createHash('sha256').update(challenge + nonce).digest('hex');
    if (!hash.startsWith('0'.repeat(this.options.difficulty))) return { ok: false, reason: 'the work is not done' };
    if (this.used.has(value.r)) return { ok: false, reason: 'the challenge was used already' };
    this.remember(value.r, value.e);
    const maxAge = this.options.cookieMinutes * 60;
    const cookie = this.signed({ k: 'clearance', d: domain, p: value.p, e: Date.now() + maxAge * 1000 });
    return { ok: true, cookie: `${COOKIE}=${cookie}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`, returnTo: sameSitePath(returnTo) };
  }

  private remember(id: string, expires: number): void {
    if (this.used.size >= MAX_USED) {
      const now = Date.now();
      for (const [key, until] of this.used) if (until <= now) this.used.delete(key);
      // Still full of live challenges: forget the oldest (the map keeps insertion order).
      for (const key of this.used.keys()) {
        if (this.used.size < MAX_USED) break;
        this.used.delete(key);
      }
    }
    this.used.set(id, expires);
  }
}

/**
 * Where a passed challenge sends the browser back to: a path on the same site, whatever the text
 * holds. Browsers drop tabs and newlines from URLs and read `\\` as `/`, so `/\t/evil.example`
 * would leave the site: the text is resolved as a browser would against a placeholder origin and
 * only its path and query are kept when the origin did not change.
 */
export function sameSitePath(returnTo: string): string {
  if (!returnTo.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(returnTo)) return '/';
  try {
    const base = 'https://challenge.invalid';
    const resolved = new URL(returnTo, base);
    if (resolved.origin !== base) return '/';
    const path = `${resolved.pathname}${resolved.search}`;
    return path.startsWith('//') ? '/' : path;
  } catch {
    return '/';
  }
}

/** An HTML navigation (a page load), as opposed to an API call, an image or a script. */
export function isNavigation(method: string | undefined, headers: { accept?: string; 'sec-fetch-dest'?: string | string[] }): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const dest = headers['sec-fetch-dest'];
  if (dest !== undefined) return dest === 'document';
  return String(headers.accept ?? '').includes('text/html');
}
