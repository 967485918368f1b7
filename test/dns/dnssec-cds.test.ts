// CDS and CDNSKEY at a signed zone's apex (RFC 7344), and the delete signal (RFC 8078 §4) while a
// zone turns DNSSEC off: a real `palisade serve` whose store holds a signing zone, one turning off
// (`signing.unsigning`) and one off with its key kept, asked directly (dig, kdig +dnssec) and
// through Unbound validating with the zones' DNSKEYs as trust anchors (AD on CDS/CDNSKEY answers).
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';
import type { ZoneSigning, ZoneSigningKey } from '../../src/model/dnssec.ts';
import { dsText } from '../../src/model/dnssec-keys.ts';
import { buildRecord } from '../../src/model/record.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { dig, type DigResult } from '../helpers/dig.ts';
import { dnskeyText, makeSigningKey } from '../helpers/dnssec-keys.ts';
import { startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { startUnbound, type Unbound } from '../helpers/unbound.ts';
import { until } from '../helpers/until.ts';

const ON = 'on.example';
const UNSIGNING = 'unsigning.example';
const OFF = 'off.example';

let server: RunningServer;
let unbound: Unbound;
let onKey: ZoneSigningKey;
let unsigningKey: ZoneSigningKey;

async function seed(dataDir: string): Promise<void> {
  const store = new EmbeddedStore({ path: dataDir });
  try {
    const owner = await store.createUser({ name: 'cds', email: 'cds@example.org' });
    const add = async (domain: string, extra: Partial<DomainState> & { dnssec?: boolean; signing?: ZoneSigning }) => {
      await store.createZone((c) => ({
        domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain, ownerId: owner.id, ns_active: true, created: c.now, updated: c.now, revision: 0, enabled: false, ...extra },
        records: [],
      }));
      await store.changeRecords(domain, owner.id, (_zone, ctx) => ({ put: [buildRecord({ name: 'www', type: 1, value: '192.0.2.10' }, ctx.nextRecordId(), domain, [])], del: [] }));
    };
    await add(ON, { dnssec: true, signing: { keys: [onKey] } });
    await add(UNSIGNING, { dnssec: false, signing: { keys: [unsigningKey], unsigning: true } });
    await add(OFF, { dnssec: false, signing: { keys: [makeSigningKey(13)] } });
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  onKey = makeSigningKey(13);
  unsigningKey = makeSigningKey(15);
  const dataDir = tempDir();
  await seed(dataDir);
  server = await startServe({ PALISADE_DATA_DIR: dataDir });
  await until('zones served', async () => (await dig(server.dnsPort, `www.${OFF}`, 'A').catch(() => undefined))?.answer.length === 1);
  unbound = await startUnbound({ authorityPort: server.dnsPort, zones: [ON, UNSIGNING, OFF], anchors: [dnskeyText(ON, onKey), dnskeyText(UNSIGNING, unsigningKey)] });
}, 60_000);

afterAll(async () => {
  await unbound?.stop();
  if (server) await stopProcess(server);
  removeTempDirs();
});

const data = (r: DigResult, type: string) => r.answer.filter((a) => a.type === type).map((a) => a.data.replace(/\s+/g, ' '));

/** dig splits a long digest or key in groups: three fields, then the rest joined. */
const joined = (rdata: string) => {
  const [a, b, c, ...rest] = rdata.split(' ');
  return `${a} ${b} ${c} ${rest.join('')}`;
};

async function validated(name: string, type: string): Promise<DigResult> {
  const r = await unbound.ask(name, type);
  expect(r.status, `${name} ${type}: ${r.raw}\n${unbound.log().slice(-3000)}`).toBe('NOERROR');
  expect(r.flags, `${name} ${type} not validated: ${r.raw}\n${unbound.log().slice(-3000)}`).toContain('ad');
  return r;
}

function kdig(name: string, type: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('kdig', [`@127.0.0.1`, '-p', String(server.dnsPort), '+dnssec', '+norec', name, type], { timeout: 10_000 }, (error, stdout) => {
      if (error) return reject(new Error(`kdig: ${error.message} (install the Debian package "knot-dnsutils")`));
      resolve(stdout);
    });
  });
}

describe('a signing zone publishes CDS and CDNSKEY for its key', () => {
  it('CDS is the DS the API shows (SHA-256), CDNSKEY the DNSKEY; both validated', async () => {
    const cds = await validated(ON, 'CDS');
    expect(data(cds, 'CDS').map((d) => joined(d).toUpperCase())).toEqual([dsText(ON, onKey)]);
    const cdnskey = await validated(ON, 'CDNSKEY');
    expect(data(cdnskey, 'CDNSKEY').map(joined)).toEqual([`257 3 13 ${onKey.public_key}`]);
  });

  it('signed like any RRset (kdig +dnssec), and listed in the apex NODATA bitmap', async () => {
    for (const type of ['CDS', 'CDNSKEY']) {
      const out = await kdig(ON, type);
      expect(out).toMatch(new RegExp(`RRSIG\\s+${type} 13 2 `));
    }
    const nodata = await dig(server.dnsPort, ON, 'TXT', ['+dnssec']);
    const nsec = nodata.authority.find((a) => a.type === 'NSEC')!.data;
    expect(nsec).toMatch(/\bCDS\b/);
    expect(nsec).toMatch(/\bCDNSKEY\b/);
    expect((await validated(ON, 'TXT')).answer).toEqual([]);
  });
});

describe('a zone turning DNSSEC off', () => {
  it('keeps signing, and publishes the delete signal instead (validated)', async () => {
    expect(data(await validated(`www.${UNSIGNING}`, 'A'), 'A')).toEqual(['192.0.2.10']);
    expect(data(await validated(UNSIGNING, 'CDS'), 'CDS')).toEqual(['0 0 0 00']);
    expect(data(await validated(UNSIGNING, 'CDNSKEY'), 'CDNSKEY')).toEqual(['0 3 0 AA==']);
    expect(data(await validated(UNSIGNING, 'DNSKEY'), 'DNSKEY').length).toBe(1);
  });

  it('a zone off (its key kept in the store) publishes neither, and signs nothing', async () => {
    for (const type of ['CDS', 'CDNSKEY', 'DNSKEY']) expect((await dig(server.dnsPort, OFF, type, ['+dnssec'])).answer).toEqual([]);
    expect((await dig(server.dnsPort, `www.${OFF}`, 'A', ['+dnssec'])).answer.map((a) => a.type)).toEqual(['A']);
  });
});
