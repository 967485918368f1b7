// CAA before ordering (RFC 8659): the relevant set climbing from each name within the zone, CNAMEs
// followed in the zone, issue / issuewild for wildcards, critical unknown tags; and the CA's
// identity from the settings.
import { describe, expect, it } from 'vitest';
import { caaProblems, caaRefusal } from '../../src/certs/caa-check.ts';
import { caaFields } from '../../src/model/values/caa.ts';
import type { RecordState } from '../../src/model/record.ts';
import { loadConfig } from '../../src/config.ts';

const Z = 'caa.example';
let id = 0;
const rec = (name: string, type: number, value: string, target: number[] = []): RecordState => ({ id: ++id, name, type: type as RecordState['type'], value, ttl: 300, priority: null, target });
const zone = (records: RecordState[]) => async (owner: string) => records.filter((r) => r.name === owner);
const set = (...values: string[]) => values.map(caaFields);

describe('CAA judged for our CA', () => {
  it('issue names the CA, or not; ";" allows none; no issue property allows any', () => {
    expect(caaRefusal('a.caa.example', set('0 issue "ca.test"'), 'ca.test')).toBeUndefined();
    expect(caaRefusal('a.caa.example', set('0 issue "CA.test; account=1"'), 'ca.test')).toBeUndefined();
    expect(caaRefusal('a.caa.example', set('0 issue "other.example"'), 'ca.test')).toMatch(/only other\.example, not our CA \(ca\.test\)/);
    expect(caaRefusal('a.caa.example', set('0 issue ";"'), 'ca.test')).toMatch(/allow no CA/);
    expect(caaRefusal('a.caa.example', set('0 iodef "mailto:x@caa.example"'), 'ca.test')).toBeUndefined();
  });
  it('wildcards read issuewild when there is one, else issue', () => {
    expect(caaRefusal('*.caa.example', set('0 issue "ca.test"', '0 issuewild ";"'), 'ca.test')).toMatch(/issuewild/);
    expect(caaRefusal('*.caa.example', set('0 issue "ca.test"'), 'ca.test')).toBeUndefined();
    expect(caaRefusal('caa.example', set('0 issue "ca.test"', '0 issuewild ";"'), 'ca.test')).toBeUndefined();
  });
  it('a critical property it does not know forbids issuance', () => {
    expect(caaRefusal('caa.example', set('0 issue "ca.test"', '128 tbs "x"'), 'ca.test')).toMatch(/critical/);
    expect(caaRefusal('caa.example', set('0 issue "ca.test"', '0 tbs "x"'), 'ca.test')).toBeUndefined();
  });
  it('climbs to the first set from the name to the apex, following CNAMEs in the zone', async () => {
    const records = zone([
      rec('@', 257, '0 issue "ca.test"'),
      rec('locked', 257, '0 issue "other.example"'),
      rec('alias', 3, 'locked.caa.example'),
      rec('deep.a', 1, '192.0.2.1'),
    ]);
    const problems = await caaProblems(Z, ['caa.example', 'deep.a.caa.example', 'x.locked.caa.example', 'alias.caa.example', '*.caa.example'], 'ca.test', records);
    expect(problems.map((p) => [p.name, p.type])).toEqual([
      ['x.locked.caa.example', 'palisade:caa'],
      ['alias.caa.example', 'palisade:caa'],
    ]);
    expect(problems[0]!.detail).toMatch(/CAA at locked\.caa\.example/);
    expect(await caaProblems(Z, ['caa.example'], 'ca.test', zone([]))).toEqual([]);
  });
  it('the general set over geo variants', async () => {
    const records = zone([rec('@', 257, '0 issue "ca.test"'), rec('@', 257, '0 issue "other.example"', [6255148])]);
    expect(await caaProblems(Z, ['caa.example'], 'ca.test', records)).toEqual([]);
  });
});

describe('the CA identity setting', () => {
  it('defaults to the directory host\'s registrable domain; PALISADE_ACME_CAA_IDENTITY overrides it', () => {
    expect(loadConfig({ PALISADE_ACME_DIRECTORY: 'https://acme-v02.api.letsencrypt.org/directory' }).certs.caaIdentity).toBe('letsencrypt.org');
    expect(loadConfig({ PALISADE_ACME_DIRECTORY: 'https://127.0.0.1:14000/dir' }).certs.caaIdentity).toBe('127.0.0.1');
    expect(loadConfig({ PALISADE_ACME_DIRECTORY: 'https://acme.zerossl.com/v2/DV90', PALISADE_ACME_CAA_IDENTITY: 'Sectigo.com' }).certs.caaIdentity).toBe('sectigo.com');
    expect(() => loadConfig({ PALISADE_ACME_CAA_IDENTITY: 'not a name' })).toThrow(/PALISADE_ACME_CAA_IDENTITY/);
  });
});
