// A signed parent zone for tests of a child's chain of trust: `parent` (one ECDSA P-256 key)
// served by a second `palisade serve` whose apex names its own servers (ns1/ns2.<parent> →
// 127.0.0.1), delegating each child (`child.<parent>`, or the labels given) to ns1; a child's DS
// set is what the test puts there, written in that server's store (`childDs`), every record of it
// living `ttl` seconds.
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import type { ZoneSigningKey } from '../../src/model/dnssec.ts';
import { buildRecord, type RecordCreate } from '../../src/model/record.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { dig } from './dig.ts';
import { startServe, type RunningServer } from './spawn-palisade.ts';
import { tempDir } from './temp.ts';
import { startUnbound, type Unbound } from './unbound.ts';
import { dnskeyText, makeSigningKey } from './dnssec-keys.ts';
import { until } from './until.ts';

export interface SignedParent {
  server: RunningServer;
  key: ZoneSigningKey;
  /** Replaces a child's DS set at the parent (empty: none); `label` names the child (`child` by default). */
  childDs(ds: readonly string[], label?: string): Promise<void>;
}

export async function startSignedParent(parent: string, ttl: number, labels: readonly string[] = ['child']): Promise<SignedParent> {
  const key = makeSigningKey(13);
  const dir = tempDir();
  const store = new EmbeddedStore({ path: dir });
  let owner: number;
  try {
    owner = (await store.createUser({ name: 'registry', email: 'registry@example.org' })).id;
    await store.createZone((c) => ({
      domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: parent, ownerId: owner, ns_active: true, created: c.now, updated: c.now, revision: 0, enabled: false, dnssec: true, signing: { keys: [key] } },
      records: [],
    }));
  } finally {
    await store.close();
  }
  const dsSets = new Map<string, readonly string[]>(labels.map((label) => [label, []]));
  const write = async (): Promise<void> => {
    const records = new EmbeddedStore({ path: dir });
    try {
      await records.changeRecords(parent, owner, (zone, ctx) => {
        const wanted: RecordCreate[] = [
          { name: 'ns1', type: 1, value: '127.0.0.1' },
          { name: 'ns2', type: 1, value: '127.0.0.1' },
          ...[...dsSets].flatMap(([label, ds]) => [{ name: label, type: 5, value: `ns1.${parent}` }, ...ds.map((value) => ({ name: label, type: 43, value }))]),
        ];
        return {
          del: ['ns1', 'ns2', ...dsSets.keys()].flatMap((name) => zone.at(name).map((r) => r.id)),
          // Below the API's TTL floor: tests wait out the DS's TTL, not half a minute.
          put: wanted.map((r) => ({ ...buildRecord(r, ctx.nextRecordId(), parent, []), ttl })),
        };
      });
    } finally {
      await records.close();
    }
  };
  // One write at a time, each with its own child's change only (tests of two children may change
  // their DS sets at once): a DS never reaches the parent before the call that put it there.
  let writing: Promise<void> = Promise.resolve();
  const childDs = (ds: readonly string[], label = 'child'): Promise<void> => {
    if (!dsSets.has(label)) return Promise.reject(new Error(`${label}.${parent} is not a child of this parent`));
    const mine = () => {
      dsSets.set(label, ds);
      return write();
    };
    writing = writing.then(mine, mine);
    return writing;
  };
  await childDs([], labels[0]);
  const server = await startServe({ PALISADE_DATA_DIR: dir, PALISADE_NS1: `ns1.${parent}`, PALISADE_NS2: `ns2.${parent}` });
  await until('the parent zone served', async () => (await dig(server.dnsPort, `ns1.${parent}`, 'A').catch(() => undefined))?.answer.length === 1);
  return { server, key, childDs };
}

/**
 * Unbound validating with only the parent's DNSKEY as trust anchor: the parent asked at its
 * server, the children (`child.<parent>`, or the labels given) at `childPort`; nothing kept longer
 * than `cacheMaxTtl` seconds, so each step of a test is seen within seconds ("test." is a
 * special-use name Unbound answers itself unless told not to).
 */
export function validatingResolver(parent: string, signed: SignedParent, childPort: number, cacheMaxTtl: number, labels: readonly string[] = ['child']): Promise<Unbound> {
  return startUnbound({
    authorityPort: signed.server.dnsPort,
    zones: [parent],
    stubs: Object.fromEntries(labels.map((label) => [`${label}.${parent}`, childPort])),
    anchors: [dnskeyText(parent, signed.key)],
    extra: [`cache-max-ttl: ${cacheMaxTtl}`, 'cache-max-negative-ttl: 1', 'local-zone: "test." nodefault'],
  });
}
