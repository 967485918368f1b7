// The GeoIP database shipped with the project: it loads without configuration, places well-known
// registry addresses, and libmaxminddb (an independent reader) agrees with our locator.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { BUNDLED_GEOIP_DB } from '../../src/geo/default-db.ts';
import { GeoLocator } from '../../src/geo/locator.ts';
import { countryByIsoCode } from '../../src/geo/targets.ts';
import { mmdblookup } from '../helpers/geo-db.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(removeTempDirs);

// Registry and operator addresses whose country is a matter of public record.
const KNOWN: Array<[string, string]> = [
  ['193.0.0.1', 'NL'], // RIPE NCC, Amsterdam
  ['2001:67c:2e8::1', 'NL'], // RIPE NCC
  ['202.12.29.1', 'AU'], // APNIC, Brisbane
  ['200.160.0.8', 'BR'], // NIC.br
  ['9.9.9.9', 'US'],
];

describe('bundled GeoIP database', () => {
  const geo = GeoLocator.open(BUNDLED_GEOIP_DB);

  it('is the default, and PALISADE_GEOIP_DB=off turns geo lookups off', () => {
    expect(loadConfig({}).geoipDb).toBe(BUNDLED_GEOIP_DB);
    expect(loadConfig({ PALISADE_GEOIP_DB: 'off' }).geoipDb).toBeUndefined();
    expect(loadConfig({ PALISADE_GEOIP_DB: 'x.mmdb' }).geoipDb).toMatch(/x\.mmdb$/);
  });

  it('is an ISO-code country database with a build date', () => {
    expect(geo.databaseType).toBe('Palisade-Country-ISO');
    expect(geo.builtOn).toMatch(/^20\d\d-\d\d-\d\d$/);
  });

  it('places well-known addresses in their countries, with continent and network prefix', () => {
    for (const [address, iso] of KNOWN) {
      const country = countryByIsoCode(iso)!;
      const located = geo.locate(address);
      expect(located.country, address).toBe(country.id);
      expect(located.continent, address).toBe(country.continentId);
      expect(located.prefix, address).toBeGreaterThan(0);
    }
    for (const unplaced of ['192.0.2.1', '127.0.0.1', '10.1.2.3', '2001:db8::1']) expect(geo.locate(unplaced), unplaced).toEqual({ prefix: expect.any(Number) });
  });

  it('is read alike by libmaxminddb once unpacked', () => {
    const file = join(tempDir('palisade-geo-'), 'country.mmdb');
    writeFileSync(file, gunzipSync(readFileSync(BUNDLED_GEOIP_DB)));
    for (const [address, iso] of KNOWN) expect(mmdblookup(file, address, 'country_code'), address).toContain(`"${iso}" <utf8_string>`);
    expect(mmdblookup(file, '192.0.2.1')).toContain('Could not find an entry');
  });
});
