// The start-up check of the operator key on a real store: keys an earlier release stored in the
// clear are sealed once; afterwards a start proves the key on one certificate; a missing or wrong
// key refuses the start.
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareSecrets } from '../../src/certs/key-check.ts';
import { SecretBox } from '../../src/certs/secret-box.ts';
import { loadConfig } from '../../src/config.ts';
import { certificateFromPem } from '../../src/model/certificate.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { makeCertificate } from '../helpers/certs.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(() => removeTempDirs());

const certs = (key?: string) => loadConfig({ PALISADE_DATA_DIR: tempDir(), ...(key && { PALISADE_SECRET_KEY: key }) }).certs;
const log = pino({ level: 'silent' });
const KEY = 'ab'.repeat(32);

describe('the operator key at start', () => {
  it('seals keys stored in the clear once, then proves the key on one certificate; refuses without it or with another', async () => {
    const store = new EmbeddedStore({ path: tempDir() });
    const user = await store.createUser({ name: 'k', email: 'k@example.org' });
    const plain: string[] = [];
    for (const name of ['a.example', 'b.example', 'c.example']) {
      await store.createZone((ctx) => ({ domain: { domain: name, ownerId: user.id, enabled: true, mask: '', ssl: true, tags: [], backend: '198.51.100.1', failover: null, fhttps: false, cachelevel: 0, sjschallenge: false, baseprotection: true, bwlimit: 0, geomode: 0, geolist: [], bind_node: [], cachelargefiles: false, ns_active: false, created: ctx.now, updated: ctx.now, revision: 0 }, records: [] }));
      const made = makeCertificate([name]);
      const input = certificateFromPem(name, readFileSync(made.certPath, 'utf8'), readFileSync(made.keyPath, 'utf8'));
      plain.push(input.key);
      await store.putCertificate(input); // as an earlier release stored it: in the clear
    }
    await expect(prepareSecrets(store, certs(), log)).rejects.toThrow(/set PALISADE_SECRET_KEY/);
    const box = await prepareSecrets(store, certs(KEY), log);
    const stored = (await store.listCertificates({ limit: 10 })).items;
    expect(stored.every((c) => SecretBox.isSealed(c.key))).toBe(true);
    expect(stored.map((c) => box!.open(c.key))).toEqual(plain);
    expect(await store.getDoc('meta', 'private-keys-sealed')).toBeDefined();
    // Sealed and marked: a start with the key passes, with another key or none is refused.
    await expect(prepareSecrets(store, certs(KEY), log)).resolves.toBeInstanceOf(SecretBox);
    await expect(prepareSecrets(store, certs('cd'.repeat(32)), log)).rejects.toThrow(/does not open with PALISADE_SECRET_KEY/);
    await expect(prepareSecrets(store, certs(), log)).rejects.toThrow(/set PALISADE_SECRET_KEY/);
    await store.close();
  });
});
