// The GeoIP database shipped with the project, used when PALISADE_GEOIP_DB is not set: an
// ISO-code-only country MMDB built from the IPFire Location database (CC BY-SA 4.0; attribution
// in default-db/README.md), gzip-compressed. Rebuilt by scripts/build-geoip-db.ts.
import { fileURLToPath } from 'node:url';

export const BUNDLED_GEOIP_DB = fileURLToPath(new URL('./default-db/country.mmdb.gz', import.meta.url));
