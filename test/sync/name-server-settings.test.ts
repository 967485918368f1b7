// NAME_SERVER_SETTINGS decides which settings changes reach name servers (the feed leaves the
// others out, and the serial stays). A setting a name server answers from but missing from that
// list would be a change the name servers never see. Here each setting of a domain is changed in
// turn, on several starting points, and the answers of a name server holding the zone compared:
// every setting whose change changes an answer must be listed, and every listed one must change
// some answer.
import { describe, expect, it } from 'vitest';
import { answer } from '../../src/dns/engine/answer.ts';
import { DomainSettings, NAME_SERVER_SETTINGS, type DomainState } from '../../src/model/domain.ts';
import { indexWith, makeZone, NAMESERVERS } from '../helpers/dns-fixture.ts';
import { makeSigningKey } from '../helpers/dnssec-keys.ts';

/** Another valid value for each setting (a new setting must be given one here: the test says so). */
const OTHER: Record<string, unknown> = {
  enabled: false,
  mask: 'www,shop',
  ssl: true,
  tags: ['other'],
  backend: '203.0.113.7',
  failover: '203.0.113.9',
  fhttps: true,
  cachelevel: 2,
  sjschallenge: true,
  baseprotection: false,
  bwlimit: 100,
  geomode: 1,
  geolist: ['DE'],
  bind_node: [2],
  cachelargefiles: true,
  waf_level: 3,
  waf_mode: 'log',
  waf_exclusions: [{ rule: 942100 }],
  waf_body_limit: 4096,
  waf_body_overflow: 'refuse',
  dnssec_algorithm: 15,
  waf_graphql: 'block',
  // Set by the service, not by the customer: name servers answer from them too.
  ns_active: false,
  failover_active: true,
  claim: { verified: false, token: 'palisade-verify=00', nameservers: NAMESERVERS },
  // DNSSEC: `dnssec` alone (no keys) makes the zone answer SERVFAIL; `signing` adds the DNSKEY set.
  dnssec: true,
  signing: { keys: [makeSigningKey()] },
};
const SERVICE_SET = ['ns_active', 'failover_active', 'claim'];

/** Starting points: a proxied domain, a DNS-only one with a failover (in use or not), one bound to a node. */
const BASES: Array<Partial<DomainState>> = [{}, { enabled: false, failover: '203.0.113.8' }, { enabled: false, failover: '203.0.113.8', failover_active: true }, { bind_node: [1] }];

/** Every answer a name server holding the zone gives to a set of questions from two places. */
function answers(domain: Partial<DomainState>): string {
  const zone = makeZone({ domain: 'watched.example', ...domain }, [
    { name: 'mail', type: 1, value: '192.0.2.7' },
    { name: '@', type: 4, value: 'mail.watched.example.', priority: 10 },
  ]);
  const index = indexWith([zone]);
  const out: unknown[] = [];
  for (const qname of ['watched.example', 'www.watched.example', 'shop.watched.example', 'mail.watched.example', 'none.watched.example']) {
    for (const qtype of [1, 28, 2, 6, 15, 48]) {
      for (const country of [2921044, 6252001, undefined]) out.push(answer(index, { qname, qtype }, country === undefined ? {} : { country }));
    }
  }
  // Whether the zone signs, or must and cannot (SERVFAIL, answered by the signer stage).
  const served = index.get('watched.example');
  out.push(served?.signing !== undefined, served?.keyless === true);
  return JSON.stringify(out, (_k, v: unknown) => (v instanceof Uint8Array ? [...v] : v));
}

describe('NAME_SERVER_SETTINGS', () => {
  it('has another value for every setting of a domain', () => {
    const settings = Object.keys(DomainSettings.properties);
    expect(settings.filter((s) => !(s in OTHER))).toEqual([]);
  });

  it('lists exactly the settings whose change changes a name server answer', () => {
    const changing = new Set<string>();
    for (const base of BASES) {
      const before = answers(base);
      for (const [setting, value] of Object.entries(OTHER)) {
        if (answers({ ...base, [setting]: value }) !== before) changing.add(setting);
      }
    }
    const missing = [...changing].filter((s) => !NAME_SERVER_SETTINGS.has(s)).sort();
    expect(missing, 'settings that change answers but never reach name servers').toEqual([]);
    const stale = [...NAME_SERVER_SETTINGS].filter((s) => !changing.has(s)).sort();
    expect(stale, 'listed settings that change no answer (each change bumps every serial for nothing)').toEqual([]);
    expect(SERVICE_SET.every((s) => changing.has(s))).toBe(true);
  });
});
