// Backends with optional ports, canonical forms, and the addresses a public edge must not reach.
import { describe, expect, it } from 'vitest';
import { checkBackend, formatBackend, parseBackend } from '../../src/model/backend.ts';

describe('backend', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1', 80],
    ['192.0.2.1:8080', '192.0.2.1:8080', 8080],
    ['192.0.2.1:80', '192.0.2.1', 80],
    ['2001:DB8::1', '2001:db8::1', 80],
    ['[2001:db8:0::1]:8443', '[2001:db8::1]:8443', 8443],
    ['[2001:db8::1]', '2001:db8::1', 80],
  ])('%s → %s', (input, canonical, port) => {
    const parsed = parseBackend(input)!;
    expect(parsed.port).toBe(port);
    expect(formatBackend(parsed)).toBe(canonical);
    expect(checkBackend(input, false)).toEqual({ ok: true, value: canonical });
  });

  it.each(['192.0.2.1:0', '192.0.2.1:65536', '[192.0.2.1]:80', 'host.example:80', '2001:db8::1:8080:', '192.0.2.1:', ':80'])('refuses %s', (input) => {
    expect(checkBackend(input, false).ok).toBe(false);
  });

  it.each(['127.0.0.1:8080', '10.1.2.3', '172.20.0.1', '192.168.1.1', '100.64.0.1', '[::1]:80', 'fd00::1', '169.254.1.1', '0.0.0.0'])(
    'refuses %s unless private backends are allowed',
    (input) => {
      const refused = checkBackend(input, false);
      expect(refused.ok).toBe(false);
      expect(!refused.ok && refused.message).toContain('PALISADE_ALLOW_PRIVATE_BACKENDS');
      expect(checkBackend(input, true).ok).toBe(true);
    },
  );
});
