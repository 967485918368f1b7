// The project's MMDB writer, read back by an independent reader (libmaxminddb's mmdblookup) and by
// the maxmind package the server uses.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Reader } from 'maxmind';
import { afterAll, describe, expect, it } from 'vitest';
import { writeMmdb } from '../../src/geo/mmdb-writer.ts';
import { GEO, mmdblookup, testNetworks, writeTestDb } from '../helpers/geo-db.ts';
import { removeTempDirs } from '../helpers/temp.ts';

afterAll(removeTempDirs);


describe('MMDB writer', () => {
  const file = writeTestDb('maxmind');

  it('is read by libmaxminddb: each documentation range maps to its country and continent', () => {
    expect(mmdblookup(file, '192.0.2.77', 'country', 'geoname_id')).toContain(`${GEO.DE.country} <uint32>`);
    expect(mmdblookup(file, '192.0.2.77', 'continent', 'geoname_id')).toContain(`${GEO.DE.continent} <uint32>`);
    expect(mmdblookup(file, '198.51.100.1', 'country', 'iso_code')).toContain('"US" <utf8_string>');
    expect(mmdblookup(file, '203.0.113.200', 'country', 'iso_code')).toContain('"JP" <utf8_string>');
    expect(mmdblookup(file, '2001:db8:ffff::1', 'country', 'iso_code')).toContain('"BR" <utf8_string>');
    expect(mmdblookup(file, '8.8.8.8')).toContain('Could not find an entry');
    const meta = execFileSync('mmdblookup', ['--file', file, '--ip', '192.0.2.1', '--verbose'], { encoding: 'utf8' });
    expect(meta).toMatch(/Type:\s+GeoIP2-Country/);
    expect(meta).toMatch(/IP version:\s+IPv6/);
  });

  it('is read by the maxmind package, with the network prefix lengths', () => {
    const reader = new Reader(readFileSync(file));
    expect(reader.getWithPrefixLength('192.0.2.1')).toEqual([expect.objectContaining({ country: expect.objectContaining({ iso_code: 'DE' }) }), 24]);
    expect(reader.getWithPrefixLength('2001:db8::1')[1]).toBe(32);
    expect(reader.getWithPrefixLength('127.0.0.2')[1]).toBe(32);
    expect(reader.get('10.0.0.1')).toBeNull();
  });

  it('writes the same bytes for the same input, and splits wider networks under narrower ones', () => {
    const a = writeMmdb(testNetworks('iso'), { databaseType: 'x' });
    const b = writeMmdb(testNetworks('iso'), { databaseType: 'x' });
    expect(a.equals(b)).toBe(true);
    const nested = new Reader(
      writeMmdb(
        [
          { network: '10.0.0.0/8', data: { country_code: 'DE' } },
          { network: '10.1.0.0/16', data: { country_code: 'US' } },
        ],
        { databaseType: 'x' },
      ),
    );
    expect(nested.getWithPrefixLength('10.1.2.3')).toEqual([{ country_code: 'US' }, 16]);
    expect(nested.getWithPrefixLength('10.2.0.1')).toEqual([{ country_code: 'DE' }, 15]);
  });

  it('writes 24-, 28- and 32-bit records that libmaxminddb and maxmind read alike', () => {
    for (const recordSize of [24, 28, 32] as const) {
      const bytes = writeMmdb(testNetworks('iso'), { databaseType: 'x', recordSize });
      const file = writeTestDb('iso');
      writeFileSync(file, bytes);
      expect(execFileSync('mmdblookup', ['--file', file, '--ip', '192.0.2.1', '--verbose'], { encoding: 'utf8' })).toMatch(new RegExp(`Record size:\\s+${recordSize} bits`));
      expect(mmdblookup(file, '203.0.113.9', 'country_code'), `${recordSize}`).toContain('"JP" <utf8_string>');
      expect(mmdblookup(file, '2001:db8::9', 'country_code'), `${recordSize}`).toContain('"BR" <utf8_string>');
      expect(new Reader(bytes).getWithPrefixLength('198.51.100.7'), `${recordSize}`).toEqual([{ country_code: 'US' }, 24]);
    }
  });
});
