import { describe, expect, it } from 'vitest';
import { parseTtl, parseZoneFile } from '../../src/zonefile/parse.ts';
import { toRecords } from '../../src/zonefile/to-records.ts';
import { planImport } from '../../src/zonefile/diff.ts';
import { writeZoneFile } from '../../src/zonefile/write.ts';

const zone = 'example.org';
const parse = async (text: string, maxRecords = 1000) => await parseZoneFile(text, { origin: zone, defaultTtl: 300, maxRecords });

const FULL = `; a zone as BIND writes it
$ORIGIN example.org.
$TTL 1h
@   IN  SOA ns1.other.net. hostmaster.other.net. ( 2024010101 ; serial
        7200 900 1209600 300 )
    IN  NS  ns1.other.net.
    IN  NS  ns2.other.net.
@       600 IN A 192.0.2.1
www     IN 600 A 192.0.2.2         ; class before TTL
        AAAA 2001:DB8::1            ; owner carried over, class omitted
mail    MX  10 mx1                  ; relative target
@       MX  20 mx2.example.org.
txt     TXT "v=spf1 include:a" "and \\"quoted\\" \\059 semi"
bare    TXT hello
multi   TXT ( "one"
              "two" )
_sip._tcp SRV 1 5 5060 sip
*.dev   CNAME www
sub     NS ns.sub
$ORIGIN sub2.example.org.
host    A 192.0.2.3
@       A 192.0.2.4
esc\\097pe A 192.0.2.5
caa     CAA 0 issue "letsencrypt.org"
`;

describe('zone-file parser', () => {
  it('TTLs in seconds and BIND units', () => {
    expect(parseTtl('3600')).toBe(3600);
    expect(parseTtl('1h30m')).toBe(5400);
    expect(parseTtl('2D')).toBe(172800);
    expect(parseTtl('1x')).toBeUndefined();
    expect(parseTtl('99999999999')).toBeUndefined();
  });

  it('reads every form the issue names', async () => {
    const parsed = await parse(FULL);
    expect(parsed.errors).toEqual([]);
    const brief = parsed.records.map((r) => `${r.line} ${r.owner} ${r.ttl} ${r.type} ${r.rdata.map((t) => t.text).join(' ')}`);
    expect(brief).toEqual([
      '4 example.org 3600 SOA ns1.other.net. hostmaster.other.net. 2024010101 7200 900 1209600 300',
      '6 example.org 3600 NS ns1.other.net.',
      '7 example.org 3600 NS ns2.other.net.',
      '8 example.org 600 A 192.0.2.1',
      '9 www.example.org 600 A 192.0.2.2',
      '10 www.example.org 3600 AAAA 2001:DB8::1',
      '11 mail.example.org 3600 MX 10 mx1',
      '12 example.org 3600 MX 20 mx2.example.org.',
      '13 txt.example.org 3600 TXT "v=spf1 include:a" "and \\"quoted\\" \\059 semi"',
      '14 bare.example.org 3600 TXT hello',
      '15 multi.example.org 3600 TXT "one" "two"',
      '17 _sip._tcp.example.org 3600 SRV 1 5 5060 sip',
      '18 *.dev.example.org 3600 CNAME www',
      '19 sub.example.org 3600 NS ns.sub',
      '21 host.sub2.example.org 3600 A 192.0.2.3',
      '22 sub2.example.org 3600 A 192.0.2.4',
      '23 escape.sub2.example.org 3600 A 192.0.2.5',
      '24 caa.sub2.example.org 3600 CAA 0 issue "letsencrypt.org"',
    ]);
  });

  it('converts to the service\'s records, setting aside what it manages or does not serve', async () => {
    const converted = await toRecords((await parse(FULL)).records, zone);
    expect(converted.errors).toEqual([]);
    expect(converted.skipped.map((s) => s.line)).toEqual([4, 6, 7]);
    const values = converted.records.map(({ line, record: r }) => `${line} ${r.name} ${r.type} ${r.value} ${r.priority ?? '-'} ${r.ttl}`);
    expect(values).toEqual([
      '8 @ 1 192.0.2.1 - 600',
      '9 www 1 192.0.2.2 - 600',
      '10 www 2 2001:db8::1 - 3600',
      '11 mail 4 mx1.example.org 10 3600',
      '12 @ 4 mx2.example.org 20 3600',
      '13 txt 6 "v=spf1 include:a" "and \\"quoted\\" ; semi" - 3600',
      '14 bare 6 hello - 3600',
      '15 multi 6 "one" "two" - 3600',
      '17 _sip._tcp 8 5 5060 sip.example.org 1 3600',
      '18 *.dev 3 www.example.org - 3600',
      '19 sub 5 ns.sub.example.org - 3600',
      '21 host.sub2 1 192.0.2.3 - 3600',
      '22 sub2 1 192.0.2.4 - 3600',
      '23 escape.sub2 1 192.0.2.5 - 3600',
      '24 caa.sub2 257 0 issue "letsencrypt.org" - 3600',
    ]);
  });

  const bad: Array<[string, string, number, RegExp]> = [
    ['$INCLUDE', '$INCLUDE /etc/passwd\nwww A 192.0.2.1\n', 1, /\$INCLUDE is not accepted/],
    ['$GENERATE', 'www A 192.0.2.1\n$GENERATE 1-100 h$ A 192.0.2.$\n', 2, /not a directive/],
    ['an unclosed quote', 'a A 192.0.2.1\nb TXT "open\n', 2, /not closed/],
    ['an unclosed parenthesis', 'a A 192.0.2.1\nb TXT ( "x"\n\nc A 192.0.2.2\n', 2, /"\(" is not closed/],
    ['class CH', 'a CH TXT "x"\n', 1, /only IN/],
    ['no type', 'a 300 IN\n', 1, /no type/],
    ['a relative $ORIGIN', '$ORIGIN sub\n', 1, /absolute/],
    ['an indented first line', '  A 192.0.2.1\n', 1, /owner/],
  ];
  for (const [what, text, line, message] of bad) {
    it(`refuses ${what} with its line`, async () => {
      const parsed = await parse(text);
      expect(parsed.errors.length).toBeGreaterThan(0);
      expect(parsed.errors[0]).toMatchObject({ line });
      expect(parsed.errors[0]!.message).toMatch(message);
    });
  }

  const wrong: Array<[string, string, number, RegExp]> = [
    ['a bad address', 'a A 192.0.2.300\n', 1, /IPv4/],
    ['a name outside the zone', 'www.example.com. A 192.0.2.1\n', 1, /outside the zone/],
    ['a TTL out of range', 'a 5 A 192.0.2.1\n', 1, /TTL 5/],
    ['a CNAME beside other data', 'a A 192.0.2.1\na CNAME b\n', 2, /CNAME/],
    ['a duplicate', 'a A 192.0.2.1\nb A 192.0.2.2\na A 192.0.2.1\n', 3, /duplicates line 1/],
    ['MX without preference', 'a MX mail\n', 1, /MX takes 2/],
    ['a TXT string over 255 octets', `a TXT "${'x'.repeat(256)}"\n`, 1, /255/],
  ];
  for (const [what, text, line, message] of wrong) {
    it(`refuses ${what} with its line`, async () => {
      const converted = await toRecords((await parse(text)).records, zone);
      expect(converted.errors.some((e) => e.line === line && message.test(e.message)), JSON.stringify(converted.errors)).toBe(true);
    });
  }

  it('stops at the record limit', async () => {
    const text = Array.from({ length: 20 }, (_, i) => `h${i} A 192.0.2.1`).join('\n');
    const parsed = await parse(text, 10);
    expect(parsed.errors).toEqual([{ line: 11, message: 'the file holds more than 10 records' }]);
  });

  it('writes what it reads back, geo variants as comments', async () => {
    const converted = await toRecords((await parse(`${FULL}\n;palisade-geo 2921044,6255148 geo 300 IN A 192.0.2.9\n`)).records, zone);
    expect(converted.errors).toEqual([]);
    const records = converted.records.map((r, i) => ({ ...r.record, id: i + 1 }));
    expect(records.at(-1)).toMatchObject({ name: "geo.sub2", target: [2921044, 6255148] });
    const text = writeZoneFile(
      { apex: zone, soa: { ttl: 3600, mname: 'ns1.p.net', rname: 'h.p.net', serial: 7, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 }, ns: { ttl: 3600, names: ['ns1.p.net', 'ns2.p.net'] } },
      records,
    );
    expect(text).toContain(';palisade-geo 2921044,6255148 geo.sub2 300 IN A 192.0.2.9');
    const again = await toRecords((await parse(text)).records, zone);
    expect(again.errors).toEqual([]);
    const plan = await planImport(records, again.records);
    expect({ added: plan.added.length, changed: plan.changed.length, removed: plan.removed.length, unchanged: plan.unchanged.length }).toEqual({ added: 0, changed: 0, removed: 0, unchanged: records.length });
  });
});
