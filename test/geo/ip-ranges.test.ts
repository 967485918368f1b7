// Range files → CIDR networks: the conversion the bundled GeoIP database is built with.
import { describe, expect, it } from 'vitest';
import { formatAddress, mergeRanges, parseTorGeoip, placeForCode, rangesToNetworks, rangeToCidrs } from '../../src/geo/ip-ranges.ts';

const v4 = (text: string) => text.split('.').reduce((value, part) => (value << 8n) | BigInt(part), 0n);
const cidrs = (first: string, last: string) => rangeToCidrs(v4(first), v4(last), 32).map(([start, length]) => `${formatAddress(start, 32)}/${length}`);

describe('rangeToCidrs', () => {
  it('covers a range exactly with the fewest aligned blocks', () => {
    expect(cidrs('1.2.3.4', '1.2.3.4')).toEqual(['1.2.3.4/32']);
    expect(cidrs('10.0.0.0', '10.255.255.255')).toEqual(['10.0.0.0/8']);
    expect(cidrs('1.2.3.5', '1.2.3.10')).toEqual(['1.2.3.5/32', '1.2.3.6/31', '1.2.3.8/31', '1.2.3.10/32']);
    expect(cidrs('0.0.0.0', '255.255.255.255')).toEqual(['0.0.0.0/0']);
    expect(cidrs('192.0.2.0', '192.0.3.127')).toEqual(['192.0.2.0/24', '192.0.3.0/25']);
  });

  it('works on IPv6 and formats full addresses', () => {
    const first = 0x20010db8n << 96n;
    const blocks = rangeToCidrs(first, first + (1n << 96n) - 1n, 128);
    expect(blocks.map(([start, length]) => `${formatAddress(start, 128)}/${length}`)).toEqual(['2001:db8:0:0:0:0:0:0/32']);
  });
});

describe('parseTorGeoip', () => {
  it('reads integer IPv4 and address IPv6 lines, skipping comments and blank lines', () => {
    const four = parseTorGeoip('# header\n\n16777216,16777471,AU\n', 32);
    expect(four).toEqual([{ first: 16777216n, last: 16777471n, bits: 32, code: 'AU' }]);
    const six = parseTorGeoip('2001:2::,2001:2:0:ffff:ffff:ffff:ffff:ffff,JP\n', 128);
    expect(six[0]!.last - six[0]!.first).toBe((1n << 80n) - 1n);
  });

  it('names the line of a malformed entry', () => {
    expect(() => parseTorGeoip('# x\n1,2,DE\n5,3,DE\n', 32)).toThrow(/line 3: range ends before it starts/);
    expect(() => parseTorGeoip('1.2.3.4,5,DE\n', 32)).toThrow(/line 1: not an IPv4 integer/);
    expect(() => parseTorGeoip('1,2\n', 32)).toThrow(/line 1: expected "first,last,code"/);
    expect(() => parseTorGeoip('2001:db8::,nonsense,DE\n', 128)).toThrow(/line 1/);
  });
});

describe('codes and merging', () => {
  it('maps ISO codes, UK to GB, EU to Europe, and drops what names no single place', () => {
    expect(placeForCode('DE')).toEqual({ country_code: 'DE' });
    expect(placeForCode('UK')).toEqual({ country_code: 'GB' });
    expect(placeForCode('EU')).toEqual({ continent: { geoname_id: 6255148 } });
    for (const code of ['??', 'AP', 'ZZ', 'SU']) expect(placeForCode(code), code).toBeUndefined();
  });

  it('joins touching ranges of one code and leaves out unplaceable ones', () => {
    const ranges = parseTorGeoip('0,255,DE\n256,511,DE\n512,767,??\n768,1023,DE\n', 32);
    expect(mergeRanges(ranges).map((r) => [r.first, r.last, r.code])).toEqual([
      [0n, 511n, 'DE'],
      [512n, 767n, '??'],
      [768n, 1023n, 'DE'],
    ]);
    expect(rangesToNetworks(ranges).map((n) => n.network)).toEqual(['0.0.0.0/23', '0.0.3.0/24']);
  });
});
