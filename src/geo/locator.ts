// Where a client is: a MaxMind DB lookup mapped to two GeoNames IDs (country, continent) and the
// prefix length the result holds for. Accepts MaxMind's layout (country / registered_country /
// continent with geoname_id) and the ISO-code-only layout (country_code), mapped through the
// GeoNames table. Results are copied into plain integers; nothing from the reader's cache is kept.
// The file is watched and a new reader replaces the old one only once it has loaded completely.
import { readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Reader, type CountryResponse } from 'maxmind';
import type { Logger } from 'pino';
import { canonicalIp } from '../model/ip.ts';
import { countryByIsoCode } from './targets.ts';

export interface Located {
  country?: number;
  continent?: number;
  /** The length of the database network the answer holds for (ECS SCOPE). */
  prefix?: number;
}

interface GeoRecord {
  country?: { geoname_id?: number; iso_code?: string };
  registered_country?: { geoname_id?: number; iso_code?: string };
  continent?: { geoname_id?: number };
  country_code?: string;
}

function fromRecord(record: GeoRecord | null): { country?: number; continent?: number } {
  if (!record) return {};
  const place = record.country?.geoname_id !== undefined || record.country?.iso_code ? record.country : record.registered_country;
  const iso = place?.iso_code ?? record.country_code;
  const byIso = iso ? countryByIsoCode(iso) : undefined;
  const country = place?.geoname_id ?? byIso?.id;
  const continent = record.continent?.geoname_id ?? byIso?.continentId;
  return { ...(country !== undefined && { country }), ...(continent !== undefined && { continent }) };
}

/** Addresses remembered: resolvers and ECS subnets repeat, and a lookup costs ~2 µs. */
const MEMO_SIZE = 65_536;

export class GeoLocator {
  private reader: Reader<CountryResponse>;
  private memo = new Map<string, Located>();
  /** The file's size and time when the current reader was loaded. */
  private loaded: string;
  private timer: NodeJS.Timeout | undefined;
  lookups = 0;

  private constructor(
    private readonly path: string,
    reader: Reader<CountryResponse>,
    private readonly log?: Logger,
  ) {
    this.reader = reader;
    this.loaded = GeoLocator.fingerprint(path);
  }

  private static fingerprint(path: string): string {
    try {
      const stat = statSync(path);
      return `${stat.size}:${stat.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  /** Opens the database; throws a clear error when the file is missing or not an MMDB. */
  static open(path: string, log?: Logger): GeoLocator {
    return new GeoLocator(path, GeoLocator.load(path), log);
  }

  private static load(path: string): Reader<CountryResponse> {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new Error(`geo: cannot read the GeoIP database ${path}: ${(error as Error).message}`);
    }
    try {
      // A gzipped file (the bundled database ships so) is unpacked in memory.
      if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
      return new Reader<CountryResponse>(bytes);
    } catch (error) {
      throw new Error(`geo: ${path} is not a MaxMind DB file: ${(error as Error).message}`);
    }
  }

  get databaseType(): string {
    return this.reader.metadata.databaseType;
  }

  /** The day the database was built (YYYY-MM-DD), so operators can tell how current it is. */
  get builtOn(): string {
    return this.reader.metadata.buildEpoch.toISOString().slice(0, 10);
  }

  locate(address: string): Located {
    const known = this.memo.get(address);
    if (known) return known;
    const located = this.lookup(address);
    if (this.memo.size >= MEMO_SIZE) this.memo.clear();
    this.memo.set(address, located);
    return located;
  }

  private lookup(address: string): Located {
    const ip = canonicalIp(address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);
    // maxmind accepts partial strings ("192.0.2"): only whole addresses are looked up.
    if (!ip) return {};
    this.lookups++;
    const [record, prefix] = this.reader.getWithPrefixLength(ip.address);
    // Both layouts are read through one loose shape; the reader's typing knows only MaxMind's.
    return { ...fromRecord(record as unknown as GeoRecord | null), prefix };
  }

  /**
   * Reloads the file when it changes (polled; compared with the file as it was when loaded, so a
   * change is never missed). A file that fails to load leaves the old reader serving.
   */
  watch(intervalMs = 2000): void {
    this.timer = setInterval(() => {
      const now = GeoLocator.fingerprint(this.path);
      if (now === this.loaded || now === 'missing') return;
      this.loaded = now;
      try {
        this.reader = GeoLocator.load(this.path);
        this.memo = new Map();
        this.log?.info({ path: this.path, type: this.databaseType, built: this.builtOn }, 'geo: GeoIP database reloaded');
      } catch (error) {
        this.log?.error({ err: error }, 'geo: reload failed; still answering from the previous database');
      }
    }, intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
