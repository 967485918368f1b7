// SVCB and HTTPS lines of a zone file → the API's records: relative targets made absolute, the
// quoted value after `key=` kept with its key, multi-line records, and bad lines refused by
// number with the rule they break.
import { describe, expect, it } from 'vitest';
import { parseZoneFile } from '../../src/zonefile/parse.ts';
import { toRecords } from '../../src/zonefile/to-records.ts';
import { recordData } from '../../src/zonefile/write.ts';

const zone = 'example.org';
const convert = async (text: string) => toRecords((await parseZoneFile(text, { origin: zone, defaultTtl: 300, maxRecords: 1000 })).records, zone);

describe('SVCB/HTTPS zone-file lines', () => {
  it('reads the forms a zone file holds, and writes them back as NSD prints them', async () => {
    const r = await convert(
      [
        '$ORIGIN example.org.',
        '@ 300 IN HTTPS 1 . alpn="h2,h3" ipv4hint=192.0.2.1',
        'svc 300 SVCB 2 pool ( port=8443',
        '                     alpn=h2 )',
        'alias HTTPS 0 pool.example.org.',
        'q HTTPS 1 . alpn="a b" key9="x y"',
        '',
      ].join('\n'),
    );
    expect(r.errors).toEqual([]);
    expect(r.records.map((x) => recordData(x.record))).toEqual([
      'HTTPS 1 . alpn="h2,h3" ipv4hint=192.0.2.1',
      'SVCB 2 pool.example.org. alpn="h2" port=8443',
      'HTTPS 0 pool.example.org.',
      'HTTPS 1 . alpn="a b" key9="x y"',
    ]);
  });

  it('refuses bad lines by number, with the rule', async () => {
    const r = await convert(['www HTTPS 1 . port=99999', 'a HTTPS 0 . alpn=h2', 'b SVCB', 'c HTTPS 1 . ipv4hint=10.0.0.256', 'd HTTPS 1 . alpn=h2 alpn=h3', 'e HTTPS "1" .', ''].join('\n'));
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.errors[0]!.message).toMatch(/port must be an integer from 0 to 65535/);
    expect(r.errors[1]!.message).toMatch(/AliasMode/);
    expect(r.errors[2]!.message).toMatch(/SvcPriority TargetName/);
    expect(r.errors[3]!.message).toMatch(/not an IPv4 address/);
    expect(r.errors[4]!.message).toMatch(/given twice/);
  });
});
