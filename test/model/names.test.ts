import { describe, expect, it } from 'vitest';
import { normaliseDomainName, normaliseOwnerName, normaliseTargetName } from '../../src/model/names.ts';

const value = (r: { ok: boolean; value?: string; message?: string }) => (r.ok ? r.value : `ERR ${r.message}`);

describe('domain names', () => {
  it.each([
    ['Example.ORG', 'example.org'],
    ['example.org.', 'example.org'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['a-b.c-d.example', 'a-b.c-d.example'],
  ])('%s → %s', (input, expected) => expect(value(normaliseDomainName(input))).toBe(expected));

  it.each(['', 'org', 'a..example', '-a.example', 'a-.example', 'a_b.example', 'exa mple.org', 'example.123', `${'a'.repeat(64)}.org`, `${'a.'.repeat(127)}org`, 'a/b.org', '*.example.org'])(
    'rejects %j',
    (input) => expect(normaliseDomainName(input).ok).toBe(false),
  );
});

describe('owner names', () => {
  it.each([
    ['@', '@'],
    ['example.org', '@'],
    ['example.org.', '@'],
    ['WWW', 'www'],
    ['www.example.org', 'www'],
    ['www.example.org.', 'www'],
    ['_sip._tcp', '_sip._tcp'],
    ['*', '*'],
    ['*.dev', '*.dev'],
    ['a.b.c', 'a.b.c'],
  ])('%s in example.org → %s', (input, expected) => expect(value(normaliseOwnerName(input, 'example.org'))).toBe(expected));

  it.each(['www.other.org.', 'a.*', '**', 'a..b', `${'a'.repeat(64)}`, 'bad$', `${'abcdefghi.'.repeat(25)}x`])('rejects %j', (input) =>
    expect(normaliseOwnerName(input, 'example.org').ok).toBe(false),
  );
});

describe('target names', () => {
  it('are absolute; @ is the apex', () => {
    expect(value(normaliseTargetName('@', 'example.org'))).toBe('example.org');
    expect(value(normaliseTargetName('Mail.Example.NET.', 'example.org'))).toBe('mail.example.net');
    expect(value(normaliseTargetName('localhost', 'example.org'))).toBe('localhost');
    expect(normaliseTargetName('*.example.org', 'example.org').ok).toBe(false);
  });
});
