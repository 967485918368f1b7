// The DNS benchmark workload: N zones of ~20 records each (in the API's model, and as zone files
// for NSD), and a query mix of ≈60% existing A/AAAA, 15% MX/TXT/SRV, 5% CNAME, 20% NXDOMAIN.
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { buildRecord, type RecordCreate } from '../../src/model/record.ts';
import type { FieldError } from '../../src/errors.ts';
import type { Zone } from '../../src/store/types.ts';

export const NS = ['ns1.palisade.example.net', 'ns2.palisade.example.net'] as const;
export const HOSTMASTER = 'hostmaster.palisade.example.net';

export const zoneName = (i: number) => `z${i}.example`;

/** GeoNames IDs used by the geo variants of the workload. */
export const GERMANY = 2921044;
export const EUROPE = 6255148;

/** With `geo`, www and api also get variants for Germany and for Europe. */
export function recordsFor(i: number, geo = false): RecordCreate[] {
  const a = (n: number) => `10.${(i >> 8) & 255}.${i & 255}.${n}`;
  return [
    { name: '@', type: 1, value: a(1) },
    { name: 'www', type: 1, value: a(2) },
    { name: 'www', type: 2, value: `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::2` },
    { name: 'api', type: 1, value: a(3) },
    { name: 'api', type: 2, value: `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::3` },
    { name: 'mail', type: 1, value: a(4) },
    { name: '@', type: 4, value: `mail.${zoneName(i)}`, priority: 10 },
    { name: '@', type: 6, value: 'v=spf1 mx -all' },
    { name: '_sip._tcp', type: 8, value: `5 5060 sip.${zoneName(i)}`, priority: 10 },
    { name: 'sip', type: 1, value: a(5) },
    { name: 'blog', type: 3, value: `www.${zoneName(i)}` },
    { name: 'cdn', type: 3, value: `api.${zoneName(i)}` },
    ...Array.from({ length: 8 }, (_, h) => ({ name: `h${h}`, type: 1, value: a(10 + h) })),
    ...(geo
      ? [
          { name: 'www', type: 1, value: a(102), target: [GERMANY] },
          { name: 'api', type: 1, value: a(103), target: [EUROPE] },
        ]
      : []),
  ];
}

export function workloadZones(count: number, revision = 1, geo = false): Zone[] {
  return Array.from({ length: count }, (_, i) => {
    const errors: FieldError[] = [];
    const domain = zoneName(i);
    const records = recordsFor(i, geo).map((r, n) => buildRecord(r, i * 100 + n + 1, domain, errors));
    if (errors.length > 0) throw new Error(JSON.stringify(errors));
    return {
      domain: { ...DOMAIN_DEFAULTS, mask: '', backend: '198.51.100.1', domain, ownerId: 1, ns_active: true, created: '', updated: '', revision },
      records,
    };
  });
}

const TYPE_TEXT = { 1: 'A', 2: 'AAAA', 3: 'CNAME', 4: 'MX', 6: 'TXT', 8: 'SRV' } as Record<number, string>;

/** The same zone as an RFC 1035 zone file (for NSD), serial equal to ours. */
export function zoneFile(zone: Zone): string {
  const origin = zone.domain.domain;
  const lines = [
    `$ORIGIN ${origin}.`,
    `@ 3600 IN SOA ${NS[0]}. ${HOSTMASTER}. ${zone.domain.revision} 7200 1800 1209600 300`,
    `@ 3600 IN NS ${NS[0]}.`,
    `@ 3600 IN NS ${NS[1]}.`,
  ];
  for (const r of zone.records) {
    const t = TYPE_TEXT[r.type]!;
    let data = r.value;
    if (t === 'CNAME') data = `${r.value}.`;
    if (t === 'MX') data = `${r.priority} ${r.value}.`;
    if (t === 'SRV') {
      const [w, p, target] = r.value.split(' ');
      data = `${r.priority} ${w} ${p} ${target}.`;
    }
    if (t === 'TXT') data = `"${r.value}"`;
    lines.push(`${r.name} ${r.ttl} IN ${t} ${data}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A full-period pseudo-random generator (mulberry32): `rnd(n)` is in [0, n). Not the low bits of
 * an LCG taken modulo n, which cycle with a short period (the query file reached 129 of 1,000 zones).
 */
function generator(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

/** A dnsperf query file: `name type` lines in a fixed pseudo-random order, over every zone. */
export function queryFile(zones: number, lines: number): string {
  const rnd = generator(42);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const z = zoneName(rnd(zones));
    const p = rnd(100);
    if (p < 60) {
      const name = ['www', 'api', '@', `h${rnd(8)}`, 'mail', 'sip'][rnd(6)]!;
      const type = name === 'www' || name === 'api' ? (rnd(2) ? 'A' : 'AAAA') : 'A';
      out.push(`${name === '@' ? z : `${name}.${z}`} ${type}`);
    } else if (p < 75) {
      out.push([`${z} MX`, `${z} TXT`, `_sip._tcp.${z} SRV`][rnd(3)]!);
    } else if (p < 80) {
      out.push(`${rnd(2) ? 'blog' : 'cdn'}.${z} A`);
    } else {
      out.push(`nx${rnd(100_000)}.${z} A`);
    }
  }
  return `${out.join('\n')}\n`;
}

/** Missing names per zone the distinct query file asks for. */
const NX_NAMES = 1000;

/**
 * A dnsperf query file of many distinct questions over every zone, as a resolver population asks
 * them: 80% questions with an answer (every name and type the zones hold, `A` for CNAMEs),
 * 20% NXDOMAIN (one of NX_NAMES missing names per zone). With 1,000 zones and 200,000 lines:
 * ~59,000 distinct questions, every zone asked.
 */
export function distinctQueryFile(zones: number, lines: number, seed = 42): string {
  const rnd = generator(seed);
  const questions = (i: number) => {
    const z = zoneName(i);
    const seen = new Set<string>();
    for (const r of recordsFor(i)) seen.add(`${r.name === '@' ? z : `${r.name}.${z}`} ${r.type === 3 ? 'A' : TYPE_TEXT[r.type as number]}`);
    return [...seen];
  };
  const perZone = Array.from({ length: zones }, (_, i) => questions(i));
  const out: string[] = [];
  for (let n = 0; n < lines; n++) {
    const i = rnd(zones);
    if (rnd(100) < 80) out.push(perZone[i]![rnd(perZone[i]!.length)]!);
    else out.push(`nx${rnd(NX_NAMES)}.${zoneName(i)} A`);
  }
  return `${out.join('\n')}\n`;
}

/** How many distinct lines a query file has. */
export const distinctLines = (text: string) => new Set(text.split('\n').filter(Boolean)).size;
