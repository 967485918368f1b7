// What a request names, read once (request-target.ts), and where a passed challenge may send a
// browser back to (challenge.ts): pure rules, with the attacks the edge was shown to let through.
import { describe, expect, it } from 'vitest';
import { Challenges, sameSitePath } from '../../src/edge/protect/challenge.ts';
import { createHash } from 'node:crypto';
import { parseAuthority, requestTarget } from '../../src/edge/request-target.ts';

describe('request target', () => {
  it('reads names, ports and addresses; refuses what a backend could read otherwise', () => {
    expect(parseAuthority('Alpha.Test.')).toEqual({ kind: 'name', host: 'alpha.test' });
    expect(parseAuthority('alpha.test:8081')).toEqual({ kind: 'name', host: 'alpha.test', port: 8081 });
    expect(parseAuthority('_dmarc-x.alpha.test')).toMatchObject({ kind: 'name' });
    for (const address of [undefined, '', '192.0.2.1', '192.0.2.1:80', '[2001:db8::1]', '[2001:db8::1]:8443']) expect(parseAuthority(address).kind, String(address)).toBe('address');
    for (const bad of ['alpha.test:@evil.example', 'alpha.test:"><script>', 'alpha.test:', 'alpha.test:0', 'alpha.test:65536', 'a b', 'alpha.test\\x', 'evil@alpha.test', '[::1', '[::1]x', 'a..b', '-a.test', `${'a'.repeat(64)}.test`]) {
      expect(parseAuthority(bad).kind, bad).toBe('invalid');
    }
  });

  it('takes the authority and origin-form path of an absolute-form target', () => {
    expect(requestTarget('http://Alpha.test/.well-known/acme-challenge/x?y=1', 'bravo.test')).toEqual({ kind: 'name', host: 'alpha.test', url: '/.well-known/acme-challenge/x?y=1', path: '/.well-known/acme-challenge/x' });
    expect(requestTarget('https://alpha.test', undefined)).toMatchObject({ kind: 'name', url: '/' });
    expect(requestTarget('https://alpha.test?x', undefined)).toMatchObject({ kind: 'name', url: '/?x' });
    for (const bad of ['http://u@alpha.test/', 'ftp://alpha.test/', 'http:///x', 'alpha.test/x']) expect(requestTarget(bad, 'alpha.test').kind, bad).toBe('invalid');
    expect(requestTarget('/a\tb', 'alpha.test').kind).toBe('invalid');
    expect(requestTarget('*', 'alpha.test')).toMatchObject({ kind: 'name', url: '*' });
  });
});

describe('challenge return path', () => {
  it('keeps the browser on the site whatever the text holds', () => {
    for (const evil of ['/\t/evil.example', '/%09/evil.example', '//evil.example', '/\\evil.example', '/\\/evil.example', 'https://evil.example/', '/\n/evil.example', 'javascript:alert(1)', '/./\t/evil']) {
      const back = sameSitePath(evil);
      expect(new URL(back, 'https://site.example').origin, JSON.stringify(evil)).toBe('https://site.example');
      expect(back.startsWith('//'), JSON.stringify(evil)).toBe(false);
    }
    expect(sameSitePath('/shop/item?id=3')).toBe('/shop/item?id=3');
  });

  it('a solved challenge with an off-site return (a tab after the slash, decoded from %09) redirects on-site', () => {
    const challenges = new Challenges({ difficulty: 1, cookieMinutes: 30, secret: Buffer.alloc(32, 7) });
    const challenge = challenges.issue('site.example', '192.0.2.1');
    let nonce = 0;
    while (!createHash('sha256').update(challenge + String(nonce)).digest('hex').startsWith('0')) nonce++;
    // The query parser decodes %09 to a tab before verify() sees it.
    const verdict = challenges.verify(challenge, String(nonce), new URLSearchParams('return=/%09/evil.example').get('return')!, 'site.example', '192.0.2.1', true);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) expect(new URL(verdict.returnTo, 'https://site.example').origin).toBe('https://site.example');
  });
});
