// DNSSEC on line, end to end: `palisade serve` whose store holds domains with signing keys,
// asked through Unbound validating with the zone's DNSKEY as its trust anchor (AD set on every
// kind of answer: positive, CNAME chain, wildcard, NODATA, nonexistent, referral, geo variants by
// ECS, a large answer that needs TCP), and by delv. A zone without keys is served as before; one
// whose domain says `dnssec` and whose keys the name server lacks answers SERVFAIL.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';
import type { ZoneSigning, ZoneSigningKey } from '../../src/model/dnssec.ts';
import type { RecordCreate } from '../../src/model/record.ts';
import { buildRecord } from '../../src/model/record.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { dig, type DigResult } from '../helpers/dig.ts';
import { dnskeyText, makeSigningKey } from '../helpers/dnssec-keys.ts';
import { GEO, writeTestDb } from '../helpers/geo-db.ts';
import { startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { startUnbound, type Unbound } from '../helpers/unbound.ts';
import { until } from '../helpers/until.ts';

const SIGNED = 'signed.example';
const ED = 'ed25519.example';
const PLAIN = 'plain.example';
const KEYLESS = 'keyless.example';
/** Served unsigned at first; signing is turned on (and off) while the name server runs. */
const LATER = 'later.example';

// API record types: 1 A, 2 AAAA, 3 CNAME, 4 MX, 5 NS, 6 TXT.
const bigTxt: RecordCreate[] = Array.from({ length: 40 }, (_, i) => ({ name: 'big', type: 6, value: `record ${i} ${'x'.repeat(60)}` }));

const SIGNED_RECORDS: RecordCreate[] = [
  { name: 'www', type: 1, value: '192.0.2.10' },
  { name: 'www', type: 2, value: '2001:db8::10' },
  { name: 'alias', type: 3, value: `www.${SIGNED}` },
  { name: 'chain', type: 3, value: `alias.${SIGNED}` },
  { name: '@', type: 4, value: `mail.${SIGNED}`, priority: 10 },
  { name: 'mail', type: 1, value: '192.0.2.25' },
  { name: '@', type: 6, value: 'v=spf1 -all' },
  { name: '*.wild', type: 1, value: '192.0.2.77' },
  { name: 'geo', type: 1, value: '192.0.2.1' },
  { name: 'geo', type: 1, value: '192.0.2.49', target: [GEO.DE.country] },
  { name: 'geo', type: 1, value: '192.0.2.81', target: [GEO.JP.country] },
  { name: 'sub', type: 5, value: 'ns1.elsewhere.test' },
  { name: 'secure', type: 5, value: 'ns1.elsewhere.test' },
  { name: 'secure', type: 43, value: `12345 13 2 ${'ab'.repeat(32)}` },
  { name: 'a.b', type: 1, value: '192.0.2.31' },
  { name: 'dangling', type: 3, value: `missing.${SIGNED}` },
  ...bigTxt,
];

let server: RunningServer;
let unbound: Unbound;
let signedKey: ZoneSigningKey;
let edKey: ZoneSigningKey;
let laterKey: ZoneSigningKey;
let dataDir: string;
let ownerId: number;
let anchorsFile: string;

async function seed(dataDir: string): Promise<void> {
  const store = new EmbeddedStore({ path: dataDir });
  try {
    const owner = await store.createUser({ name: 'dnssec', email: 'dnssec@example.org' });
    ownerId = owner.id;
    const add = async (domain: string, records: RecordCreate[], extra: Partial<DomainState> & { dnssec?: boolean; signing?: ZoneSigning }) => {
      await store.createZone((c) => ({
        domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain, ownerId: owner.id, ns_active: true, created: c.now, updated: c.now, revision: 0, enabled: false, ...extra },
        records: [],
      }));
      if (records.length > 0) {
        await store.changeRecords(domain, owner.id, (_zone, ctx) => ({
          put: records.map((r) => {
            const errors: unknown[] = [];
            const built = buildRecord(r, ctx.nextRecordId(), domain, errors as never);
            if (errors.length > 0) throw new Error(`bad fixture record ${JSON.stringify(r)}: ${JSON.stringify(errors)}`);
            return built;
          }),
          del: [],
        }));
      }
    };
    await add(SIGNED, SIGNED_RECORDS, { dnssec: true, signing: { keys: [signedKey] } });
    await add(ED, [{ name: 'www', type: 1, value: '192.0.2.15' }], { dnssec: true, signing: { keys: [edKey] } });
    await add(PLAIN, [{ name: 'www', type: 1, value: '192.0.2.20' }], {});
    await add(KEYLESS, [{ name: 'www', type: 1, value: '192.0.2.30' }], { dnssec: true });
    await add(LATER, [{ name: 'www', type: 1, value: '192.0.2.40' }], {});
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  signedKey = makeSigningKey(13);
  edKey = makeSigningKey(15);
  laterKey = makeSigningKey(13);
  dataDir = tempDir();
  await seed(dataDir);
  server = await startServe({ PALISADE_DATA_DIR: dataDir, PALISADE_GEOIP_DB: writeTestDb('maxmind') });
  await until('zones served', async () => (await dig(server.dnsPort, `www.${PLAIN}`, 'A').catch(() => undefined))?.answer.length === 1);
  unbound = await startUnbound({
    authorityPort: server.dnsPort,
    zones: [SIGNED, ED, PLAIN, KEYLESS, LATER],
    anchors: [dnskeyText(SIGNED, signedKey), dnskeyText(ED, edKey), dnskeyText(LATER, laterKey)],
  });
  anchorsFile = join(tempDir(), 'anchors.conf');
  writeFileSync(
    anchorsFile,
    `trust-anchors {\n${[
      [SIGNED, signedKey],
      [ED, edKey],
    ]
      .map(([zone, key]) => `  ${zone}. static-key ${(key as ZoneSigningKey).flags} 3 ${(key as ZoneSigningKey).algorithm} "${(key as ZoneSigningKey).public_key}";`)
      .join('\n')}\n};\n`,
  );
}, 120_000);

afterAll(async () => {
  await unbound?.stop();
  if (server) await stopProcess(server);
  removeTempDirs();
});

const data = (r: DigResult, type: string) =>
  r.answer
    .filter((a) => a.type === type)
    .map((a) => a.data)
    .sort();

async function validated(name: string, type: string, options: string[] = []): Promise<DigResult> {
  const r = await unbound.ask(name, type, options);
  expect(r.status, `${name} ${type}: ${r.raw}\n${unbound.log().slice(-3000)}`).not.toBe('SERVFAIL');
  expect(r.flags, `${name} ${type} not validated: ${r.raw}\n${unbound.log().slice(-3000)}`).toContain('ad');
  return r;
}

function delv(name: string, type: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('delv', [`@127.0.0.1`, '-p', String(server.dnsPort), '-a', anchorsFile, `+root=${name.endsWith(`.${ED}`) ? ED : SIGNED}`, name, type], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error && !stdout) return reject(new Error(`delv ${name} ${type}: ${error.message} (install the Debian package "bind9-dnsutils")\n${stderr}`));
      resolve(stdout + stderr);
    });
  });
}

describe('signed answers validated by Unbound (the DNSKEY as trust anchor)', () => {
  it('A, AAAA, MX, TXT, NS, SOA and DNSKEY at the apex', async () => {
    expect(data(await validated(`www.${SIGNED}`, 'A'), 'A')).toEqual(['192.0.2.10']);
    expect(data(await validated(`www.${SIGNED}`, 'AAAA'), 'AAAA')).toEqual(['2001:db8::10']);
    expect(data(await validated(SIGNED, 'MX'), 'MX')).toEqual([`10 mail.${SIGNED}.`]);
    expect(data(await validated(SIGNED, 'TXT'), 'TXT')).toEqual(['"v=spf1 -all"']);
    expect(data(await validated(SIGNED, 'NS'), 'NS').length).toBe(2);
    expect(data(await validated(SIGNED, 'SOA'), 'SOA').length).toBe(1);
    expect(data(await validated(SIGNED, 'DNSKEY'), 'DNSKEY').length).toBe(1);
  });

  it('a CNAME chain, each link signed', async () => {
    const r = await validated(`chain.${SIGNED}`, 'A');
    expect(data(r, 'CNAME')).toEqual([`alias.${SIGNED}.`, `www.${SIGNED}.`]);
    expect(data(r, 'A')).toEqual(['192.0.2.10']);
  });

  it('a wildcard answer (signed as the wildcard, the name proven not to exist)', async () => {
    const r = await validated(`anything.wild.${SIGNED}`, 'A');
    expect(data(r, 'A')).toEqual(['192.0.2.77']);
    const direct = await dig(server.dnsPort, `anything.wild.${SIGNED}`, 'A', ['+dnssec']);
    // RRSIG Labels = the wildcard owner's labels ("*" not counted): wild.signed.example = 3.
    expect(direct.answer.find((a) => a.type === 'RRSIG')?.data.split(' ')[2]).toBe('3');
  });

  it('NODATA and a nonexistent name: compact denial, validated', async () => {
    const nodata = await validated(`www.${SIGNED}`, 'MX');
    expect(nodata.status).toBe('NOERROR');
    expect(nodata.answer).toEqual([]);
    const nx = await validated(`nothing-here.${SIGNED}`, 'A');
    // RFC 9824: NOERROR with an NSEC saying NXNAME, not NXDOMAIN, to a DNSSEC-OK asker.
    expect(nx.answer).toEqual([]);
    const direct = await dig(server.dnsPort, `nothing-here.${SIGNED}`, 'A', ['+dnssec']);
    expect(direct.status).toBe('NOERROR');
    expect(direct.authority.find((a) => a.type === 'NSEC')?.data).toMatch(/\\000\.nothing-here\.signed\.example\. RRSIG NSEC (NXNAME|TYPE128)/);
    // Without DO the answer is the classic one.
    expect((await dig(server.dnsPort, `nothing-here.${SIGNED}`, 'A')).status).toBe('NXDOMAIN');
  });

  it('a referral to an unsigned child: NS unsigned, no DS proven', async () => {
    const direct = await dig(server.dnsPort, `host.sub.${SIGNED}`, 'A', ['+dnssec']);
    const types = direct.authority.map((a) => a.type);
    expect(types).toContain('NS');
    expect(types).toContain('NSEC');
    expect(direct.authority.filter((a) => a.type === 'RRSIG').map((a) => a.data.split(' ')[0])).toEqual(['NSEC']);
    const ds = await validated(`sub.${SIGNED}`, 'DS');
    expect(ds.answer).toEqual([]);
  });

  it('a referral to a signed child: its DS set signed; the DS validated', async () => {
    const direct = await dig(server.dnsPort, `host.secure.${SIGNED}`, 'A', ['+dnssec']);
    expect(direct.authority.map((a) => a.type).sort()).toEqual(['DS', 'NS', 'RRSIG']);
    expect(direct.authority.find((a) => a.type === 'RRSIG')!.data.split(' ')[0]).toBe('DS');
    const ds = await validated(`secure.${SIGNED}`, 'DS');
    // dig splits the digest in groups: compare without spaces.
    expect(data(ds, 'DS').map((d) => d.replace(/\s+/g, '').toLowerCase())).toEqual([`12345132${'ab'.repeat(32)}`]);
  });

  it('an empty non-terminal, a wildcard without the type, and a CNAME to a missing name: validated denials', async () => {
    expect((await validated(`b.${SIGNED}`, 'A')).answer).toEqual([]);
    expect((await validated(`x.wild.${SIGNED}`, 'TXT')).answer).toEqual([]);
    const dangling = await validated(`dangling.${SIGNED}`, 'A');
    expect(data(dangling, 'CNAME')).toEqual([`missing.${SIGNED}.`]);
    expect(data(dangling, 'A')).toEqual([]);
  });

  it('geo answers by ECS for two countries, each variant signed and validated', async () => {
    const de = await validated(`geo.${SIGNED}`, 'A', ['+subnet=192.0.2.0/24']);
    expect(data(de, 'A')).toEqual(['192.0.2.49']);
    const jp = await validated(`geo.${SIGNED}`, 'A', ['+subnet=203.0.113.0/24']);
    expect(data(jp, 'A')).toEqual(['192.0.2.81']);
  });

  it('a large answer: TC=1 over UDP, then the whole signed set over TCP', async () => {
    const udp = await dig(server.dnsPort, `big.${SIGNED}`, 'TXT', ['+dnssec', '+ignore', '+bufsize=1232']);
    expect(udp.flags).toContain('tc');
    const r = await validated(`big.${SIGNED}`, 'TXT');
    expect(data(r, 'TXT').length).toBe(40);
  });

  it('an Ed25519 zone (algorithm 15)', async () => {
    expect(data(await validated(`www.${ED}`, 'A'), 'A')).toEqual(['192.0.2.15']);
    expect((await validated(`nx.${ED}`, 'A')).answer).toEqual([]);
  });
});

describe('delv', () => {
  it('says "fully validated" for positive, wildcard, NODATA and nonexistent answers', async () => {
    for (const [name, type] of [
      [`www.${SIGNED}`, 'A'],
      [`chain.${SIGNED}`, 'A'],
      [`x.wild.${SIGNED}`, 'A'],
      [`www.${SIGNED}`, 'TXT'],
      [`nope.${SIGNED}`, 'A'],
      [`www.${ED}`, 'A'],
    ]) {
      const out = await delv(name!, type!);
      expect(out, `${name} ${type}`).toMatch(/fully validated/);
    }
  });
});

describe('zones that do not sign', () => {
  it('a zone without keys is unchanged: no RRSIG, no DNSKEY, NXDOMAIN stays', async () => {
    const r = await dig(server.dnsPort, `www.${PLAIN}`, 'A', ['+dnssec']);
    expect(r.answer.map((a) => a.type)).toEqual(['A']);
    expect((await dig(server.dnsPort, PLAIN, 'DNSKEY', ['+dnssec'])).answer).toEqual([]);
    expect((await dig(server.dnsPort, `nx.${PLAIN}`, 'A', ['+dnssec'])).status).toBe('NXDOMAIN');
    const through = await unbound.ask(`www.${PLAIN}`, 'A');
    expect(through.flags).not.toContain('ad');
    expect(data(through, 'A')).toEqual(['192.0.2.20']);
  });

  it('a zone whose domain says dnssec without keys answers SERVFAIL, not unsigned data', async () => {
    for (const options of [['+dnssec'], []]) {
      expect((await dig(server.dnsPort, `www.${KEYLESS}`, 'A', options)).status).toBe('SERVFAIL');
    }
  });

  it('the signature cache shows in /metrics', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/palisade_dns_signature_cache_entries \d+/);
    expect(text).toMatch(/palisade_dns_signature_cache_bytes \d+/);
    expect(text).not.toContain(signedKey.private_key);
  });
});

describe('the domain\'s state changes while the name server runs', () => {
  it('signing turned on reaches the name server (validated), turned off stops signing', async () => {
    const store = new EmbeddedStore({ path: dataDir });
    try {
      const change = (extra: object) =>
        store.updateZone(LATER, ownerId, (zone, ctx) => ({ domain: { ...zone.domain, ...extra, updated: ctx.now } as DomainState }));
      const signedNow = async () => (await dig(server.dnsPort, `www.${LATER}`, 'A', ['+dnssec'])).answer.some((a) => a.type === 'RRSIG');
      expect(await signedNow()).toBe(false);
      await change({ dnssec: true, signing: { keys: [laterKey] } });
      await until('signed answers', signedNow);
      expect(data(await validated(`www.${LATER}`, 'A'), 'A')).toEqual(['192.0.2.40']);
      await change({ dnssec: false, signing: undefined });
      await until('unsigned answers', async () => !(await signedNow()));
      expect((await dig(server.dnsPort, LATER, 'DNSKEY', ['+dnssec'])).answer).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
