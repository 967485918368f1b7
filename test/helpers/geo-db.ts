// The test GeoIP database: documentation ranges (and two loopback addresses, for queries without
// ECS) mapped to four countries, in MaxMind's layout or the ISO-code-only one.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeMmdb, type MmdbNetwork } from '../../src/geo/mmdb-writer.ts';
import { tempDir } from './temp.ts';

export const GEO = {
  DE: { country: 2921044, continent: 6255148 },
  US: { country: 6252001, continent: 6255149 },
  JP: { country: 1861060, continent: 6255147 },
  BR: { country: 3469034, continent: 6255150 },
} as const;

const CONTINENT_CODE = { DE: 'EU', US: 'NA', JP: 'AS', BR: 'SA' } as const;

export const TEST_NETWORKS: Array<[string, keyof typeof GEO]> = [
  ['192.0.2.0/24', 'DE'],
  ['198.51.100.0/24', 'US'],
  ['203.0.113.0/24', 'JP'],
  ['2001:db8::/32', 'BR'],
  ['127.0.0.2/32', 'DE'],
  ['127.0.0.3/32', 'US'],
];

export function testNetworks(layout: 'maxmind' | 'iso'): MmdbNetwork[] {
  return TEST_NETWORKS.map(([network, iso]): MmdbNetwork => ({
    network,
    data:
      layout === 'iso'
        ? { country_code: iso }
        : {
            continent: { code: CONTINENT_CODE[iso], geoname_id: GEO[iso].continent, names: { en: CONTINENT_CODE[iso] } },
            country: { geoname_id: GEO[iso].country, iso_code: iso, names: { en: iso } },
          },
  }));
}

/** Writes the test database to a temporary file and returns its path. */
export function writeTestDb(layout: 'maxmind' | 'iso' = 'maxmind', networks = testNetworks(layout)): string {
  const path = join(tempDir('palisade-geo-'), `test-${layout}.mmdb`);
  writeFileSync(path, writeMmdb(networks, { databaseType: layout === 'iso' ? 'Test-ISO-Country' : 'GeoIP2-Country' }));
  return path;
}

/** mmdblookup's whole output (it reports misses on stderr): libmaxminddb as an independent reader. */
export function mmdblookup(file: string, ip: string, ...path: string[]): string {
  const run = spawnSync('mmdblookup', ['--file', file, '--ip', ip, ...path], { encoding: 'utf8' });
  if (run.error) throw new Error('mmdblookup is required for this test (Debian: apt-get install mmdb-bin)');
  return run.stdout + run.stderr;
}
