// Address ranges → CIDR networks, and the range files Tor publishes from the IPFire Location
// database ("first,last,CC" per line; IPv4 as integers, IPv6 as addresses). The bundled default
// GeoIP database is built from them (scripts/build-geoip-db.ts); pure, so it is tested alone.
import { ipToBytes } from '../model/ip.ts';
import type { MmdbNetwork } from './mmdb-writer.ts';
import { countryByIsoCode } from './targets.ts';

export interface IpRange {
  first: bigint;
  last: bigint;
  /** 32 or 128 */
  bits: 32 | 128;
  code: string;
}

const EUROPE = 6255148;

/**
 * What a range file's code means for us: an ISO country, Europe as a whole ("EU", registries'
 * pan-European blocks), or nothing ("??", "AP" which spans two continents, retired codes).
 */
export function placeForCode(code: string): MmdbNetwork['data'] | undefined {
  const iso = code === 'UK' ? 'GB' : code;
  if (countryByIsoCode(iso)) return { country_code: iso };
  if (iso === 'EU') return { continent: { geoname_id: EUROPE } };
  return undefined;
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function parseEnd(text: string, bits: 32 | 128): bigint {
  if (bits === 32) {
    if (!/^\d{1,10}$/.test(text)) throw new Error(`not an IPv4 integer: ${text}`);
    const value = BigInt(text);
    if (value > 0xffffffffn) throw new Error(`not an IPv4 integer: ${text}`);
    return value;
  }
  return bytesToBigInt(ipToBytes(text));
}

/** Parses one of Tor's geoip (bits 32) or geoip6 (bits 128) files; comments and blanks skipped. */
export function parseTorGeoip(text: string, bits: 32 | 128): IpRange[] {
  const ranges: IpRange[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = line.split(',');
    try {
      if (fields.length !== 3) throw new Error('expected "first,last,code"');
      const first = parseEnd(fields[0]!, bits);
      const last = parseEnd(fields[1]!, bits);
      if (last < first) throw new Error('range ends before it starts');
      ranges.push({ first, last, bits, code: fields[2]! });
    } catch (error) {
      throw new Error(`line ${index + 1}: ${(error as Error).message}: ${line}`);
    }
  });
  return ranges;
}

/** Joins touching ranges with the same code (files split them by registry record). */
export function mergeRanges(ranges: readonly IpRange[]): IpRange[] {
  const sorted = [...ranges].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const merged: IpRange[] = [];
  for (const range of sorted) {
    const previous = merged.at(-1);
    if (previous && previous.code === range.code && previous.bits === range.bits && previous.last + 1n === range.first) {
      previous.last = range.last;
    } else merged.push({ ...range });
  }
  return merged;
}

/** The fewest CIDR blocks covering first…last exactly, as [start, prefix length] pairs. */
export function rangeToCidrs(first: bigint, last: bigint, bits: 32 | 128): Array<[bigint, number]> {
  const blocks: Array<[bigint, number]> = [];
  let start = first;
  while (start <= last) {
    // The largest block aligned at start that does not run past last.
    let size = 0;
    while (size < bits && (start & ((1n << BigInt(size + 1)) - 1n)) === 0n && start + (1n << BigInt(size + 1)) - 1n <= last) size++;
    blocks.push([start, bits - size]);
    start += 1n << BigInt(size);
  }
  return blocks;
}

export function formatAddress(value: bigint, bits: 32 | 128): string {
  if (bits === 32) return [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

/** Ranges → the networks of an ISO-code-only country database; unplaceable codes are left out. */
export function rangesToNetworks(ranges: readonly IpRange[]): MmdbNetwork[] {
  const networks: MmdbNetwork[] = [];
  for (const range of mergeRanges(ranges)) {
    const data = placeForCode(range.code);
    if (!data) continue;
    for (const [start, length] of rangeToCidrs(range.first, range.last, range.bits)) {
      networks.push({ network: `${formatAddress(start, range.bits)}/${length}`, data });
    }
  }
  return networks;
}
