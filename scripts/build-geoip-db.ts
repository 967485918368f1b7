// Builds the bundled default GeoIP database (src/geo/default-db/country.mmdb.gz) from the range
// files Tor publishes from the IPFire Location database (CC BY-SA 4.0), as Debian's tor-geoipdb
// package installs them:
//   apt-get install tor-geoipdb && npm run geoip:build
//   npm run geoip:build -- --geoip FILE --geoip6 FILE --out FILE
// The output is an ISO-code-only country MMDB; its build date is the date of the input files.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { parseTorGeoip, rangesToNetworks } from '../src/geo/ip-ranges.ts';
import { writeMmdb } from '../src/geo/mmdb-writer.ts';
import { BUNDLED_GEOIP_DB } from '../src/geo/default-db.ts';

const { values } = parseArgs({
  options: {
    geoip: { type: 'string', default: '/usr/share/tor/geoip' },
    geoip6: { type: 'string', default: '/usr/share/tor/geoip6' },
    out: { type: 'string', default: BUNDLED_GEOIP_DB },
  },
});

const started = Date.now();
const ranges = [
  ...parseTorGeoip(readFileSync(values.geoip, 'utf8'), 32),
  ...parseTorGeoip(readFileSync(values.geoip6, 'utf8'), 128),
];
const networks = rangesToNetworks(ranges);
const buildEpoch = Math.floor(Math.max(statSync(values.geoip).mtimeMs, statSync(values.geoip6).mtimeMs) / 1000);
const mmdb = writeMmdb(networks, {
  databaseType: 'Palisade-Country-ISO',
  description: 'Countries from the IPFire Location database (CC BY-SA 4.0), via Tor geoip files',
  buildEpoch,
});
const packed = gzipSync(mmdb, { level: 9 });
writeFileSync(values.out, packed);
console.log(
  `${ranges.length} ranges → ${networks.length} networks; MMDB ${(mmdb.length / 1e6).toFixed(1)} MB, ` +
    `gzip ${(packed.length / 1e6).toFixed(1)} MB, data of ${new Date(buildEpoch * 1000).toISOString().slice(0, 10)}; ` +
    `${values.out} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
