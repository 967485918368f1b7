// The secondaries' file: read at start, read again when it changes (no restart), and a file that
// does not read (half-written by hand, a bad key) keeps the list as it was and says why.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEntries, Secondaries, writeEntries, type SecondaryEntry } from '../../../src/dns/transfer/secondaries.ts';
import { parseTsigKey, type TsigKey } from '../../../src/dns/transfer/tsig.ts';
import { removeTempDirs, tempDir } from '../../helpers/temp.ts';
import { until } from '../../helpers/until.ts';

afterAll(() => removeTempDirs());
const entry = (name: string, keyName: string): SecondaryEntry => ({ name, addresses: ['192.0.2.53'], port: 53, tsigKey: `${keyName}:${randomBytes(32).toString('base64')}`, zones: ['a.example'], catalog: false });

describe('secondaries file', () => {
  // Waits of 20 s: a file never read again fails them all the same; on a loaded machine a 5 s wait for
  // a 20 ms poll timed out once (the stat runs in the thread pool the other suites' servers share).
  it('is read again when it changes; a broken file keeps the list', async () => {
    const file = join(tempDir(), 'secondaries.json');
    const one = entry('one', 'k1');
    const k1 = parseTsigKey(one.tsigKey) as TsigKey;
    writeEntries(file, [one]);
    const errors: unknown[] = [];
    const list = new Secondaries(file, (e) => errors.push(e));
    list.watch(20);
    expect(list.keysNamed('k1')).toHaveLength(1);
    expect(list.allows('192.0.2.53', k1, 'a.example', false)).toBe(true);
    expect(list.allows('192.0.2.53', k1, 'b.example', false)).toBe(false);
    expect(list.allows('192.0.2.54', k1, 'a.example', false)).toBe(false);
    // fs.watchFile takes its first look at the file asynchronously: a file replaced before that
    // look is its starting point, not a change (seen under load). Written again until seen, as an
    // operator's second save would be.
    const second = [one, entry('two', 'k2')];
    let written = 0;
    await until('the second secondary', () => {
      if (written++ % 10 === 0) writeEntries(file, second);
      return list.keysNamed('k2').length > 0;
    }, 20_000);
    writeFileSync(file, '{"secondaries": [');
    await until('the error reported', () => errors.length > 0, 20_000);
    expect(list.all.map((s) => s.name)).toEqual(['one', 'two']);
    writeFileSync(file, JSON.stringify({ secondaries: [{ ...entry('bad', 'k3'), tsigKey: 'k3:c2hvcnQ=' }] }));
    await until('the second error', () => errors.length > 1, 20_000);
    expect(list.keysNamed('k3')).toEqual([]);
    expect(list.all.map((s) => s.name)).toEqual(['one', 'two']);
    list.close();
    expect(readEntries(join(tempDir(), 'none.json'))).toEqual([]);
  });
});
