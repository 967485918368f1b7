// Who receives a change of a domain's setting is declared once (SETTING_READERS): the sets the
// feeds filter with are derived from it, and every setting of the schema must be declared, so a
// new setting cannot be forgotten by the name servers' (or the edges') feed. That the name
// servers' part is exactly what changes their answers: name-server-settings.test.ts.
import { describe, expect, it } from 'vitest';
import { DomainSettings, NAME_SERVER_SETTINGS, NOT_EDGE_SETTINGS } from '../../src/model/domain.ts';
import { SETTING_READERS } from '../../src/model/domain-readers.ts';
import { concernsEdges, edgeDomain } from '../../src/sync/edge-feed-format.ts';
import { makeZone } from '../helpers/dns-fixture.ts';
import { makeSigningKey } from '../helpers/dnssec-keys.ts';
import type { Change } from '../../src/store/types.ts';

const declared = Object.keys(SETTING_READERS);

describe('who reads a setting is declared once', () => {
  it('declares every setting of the schema', () => {
    const undeclared = Object.keys(DomainSettings.properties).filter((name) => !declared.includes(name));
    expect(undeclared, 'settings without their readers in SETTING_READERS').toEqual([]);
  });

  it("derives the name servers' settings from the declaration", () => {
    expect([...NAME_SERVER_SETTINGS].sort()).toEqual(declared.filter((name) => SETTING_READERS[name as keyof typeof SETTING_READERS].includes('name servers')).sort());
  });

  it("derives what no edge reads from the declaration, and the edges' feed leaves those changes out", () => {
    expect([...NOT_EDGE_SETTINGS].sort()).toEqual(declared.filter((name) => !SETTING_READERS[name as keyof typeof SETTING_READERS].includes('edges')).sort());
    const change = (settings: string[]): Change => ({ revision: 1, at: '2026-01-01T00:00:00.000Z', kind: 'zone', key: 'a.example', op: 'put', settings }) as Change;
    for (const name of declared) {
      const readByEdges = SETTING_READERS[name as keyof typeof SETTING_READERS].includes('edges');
      expect(concernsEdges(change([name])), name).toBe(readByEdges);
    }
  });

  it('an edge receives every field of a domain but the signing keys, which only their readers (name servers) get', () => {
    const domain = { ...makeZone({ domain: 'keys.example', dnssec: true }, []).domain, signing: { keys: [makeSigningKey()] } };
    const given = edgeDomain(domain);
    expect(Object.keys(domain).filter((field) => !(field in given))).toEqual(['signing']);
    expect(SETTING_READERS.signing).not.toContain('edges');
    const unsigned = makeZone({ domain: 'plain.example' }, []).domain;
    expect(edgeDomain(unsigned)).toBe(unsigned);
  });
});
