import { copyFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { writeMmdb } from '../../src/geo/mmdb-writer.ts';
import { GeoLocator } from '../../src/geo/locator.ts';
import { GEO, writeTestDb } from '../helpers/geo-db.ts';
import { removeTempDirs } from '../helpers/temp.ts';

afterAll(removeTempDirs);

describe('GeoLocator', () => {
  it('maps MaxMind’s layout and the ISO-code-only layout to the same two GeoNames IDs', () => {
    for (const layout of ['maxmind', 'iso'] as const) {
      const geo = GeoLocator.open(writeTestDb(layout));
      expect(geo.locate('192.0.2.10')).toEqual({ ...GEO.DE, prefix: 24 });
      expect(geo.locate('2001:db8:1::1')).toEqual({ ...GEO.BR, prefix: 32 });
      expect(geo.locate('203.0.113.9')).toMatchObject(GEO.JP);
      expect(geo.locate('8.8.8.8')).toEqual({ prefix: expect.any(Number) });
      geo.close();
    }
  });

  it('falls back to registered_country when country is missing', () => {
    const path = writeTestDb('maxmind', [{ network: '192.0.2.0/24', data: { registered_country: { geoname_id: GEO.US.country, iso_code: 'US' }, continent: { geoname_id: GEO.US.continent } } }]);
    expect(GeoLocator.open(path).locate('192.0.2.1')).toMatchObject(GEO.US);
  });

  it('looks up only whole addresses; IPv4-mapped IPv6 is looked up as IPv4', () => {
    const geo = GeoLocator.open(writeTestDb('maxmind'));
    expect(geo.locate('192.0.2')).toEqual({});
    expect(geo.locate('not an ip')).toEqual({});
    expect(geo.locate('::ffff:192.0.2.5')).toMatchObject(GEO.DE);
    geo.close();
  });

  it('refuses a file that is not an MMDB with a clear message', () => {
    const path = writeTestDb('iso');
    writeFileSync(path, 'not a database');
    expect(() => GeoLocator.open(path)).toThrow(/is not a MaxMind DB file/);
    expect(() => GeoLocator.open('/nonexistent.mmdb')).toThrow(/cannot read the GeoIP database/);
  });

  it('reloads a changed file without a restart, and keeps the old data when the new file is broken', async () => {
    const path = writeTestDb('iso');
    const geo = GeoLocator.open(path);
    geo.watch(50);
    expect(geo.locate('192.0.2.1')).toMatchObject(GEO.DE);
    const swapped = writeTestDb('iso', [{ network: '192.0.2.0/24', data: { country_code: 'JP' } }]);
    copyFileSync(swapped, path);
    for (let i = 0; i < 60 && geo.locate('192.0.2.1').country !== GEO.JP.country; i++) await new Promise((r) => setTimeout(r, 50));
    expect(geo.locate('192.0.2.1')).toMatchObject(GEO.JP);
    writeFileSync(path, 'garbage');
    await new Promise((r) => setTimeout(r, 300));
    expect(geo.locate('192.0.2.1')).toMatchObject(GEO.JP);
    writeFileSync(path, writeMmdb([{ network: '192.0.2.0/24', data: { country_code: 'US' } }], { databaseType: 'x' }));
    for (let i = 0; i < 60 && geo.locate('192.0.2.1').country !== GEO.US.country; i++) await new Promise((r) => setTimeout(r, 50));
    expect(geo.locate('192.0.2.1')).toMatchObject(GEO.US);
    geo.close();
  });
});
