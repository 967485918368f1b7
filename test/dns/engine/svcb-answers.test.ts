// HTTPS and SVCB in the answer engine (RFC 9460 §4): served at the apex beside the addresses,
// reached through a CNAME like any type, with the targets' data in ADDITIONAL; and the RDATA on
// the wire as NSD sends it.
import { describe, expect, it } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import { QTYPE } from '../../../src/dns/wire/constants.ts';
import { writeRdata } from '../../../src/dns/wire/rdata.ts';
import { WireWriter } from '../../../src/dns/wire/writer.ts';
import type { RRset } from '../../../src/dns/zone/types.ts';
import { indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const index = indexWith([
  makeZone({ domain: 'svc.example', enabled: false, backend: '198.51.100.7' }, [
    { name: '@', type: 'HTTPS', value: '1 . alpn=h2,h3' },
    { name: 'www', type: 'CNAME', value: 'svc.example' },
    { name: 'api', type: 'HTTPS', value: '1 pool.svc.example alpn=h2' },
    { name: 'api', type: 'HTTPS', value: '2 far.example.net alpn=h2' },
    { name: 'pool', type: 'A', value: '192.0.2.10' },
    { name: 'pool', type: 'AAAA', value: '2001:db8::10' },
    { name: 'alias', type: 'HTTPS', value: '0 pool.svc.example' },
    { name: 'pool', type: 'HTTPS', value: '1 . alpn=h3' },
    { name: '_dns', type: 'SVCB', value: '1 ns.svc.example alpn=dot port=853' },
    { name: 'ns', type: 'A', value: '192.0.2.53' },
    { name: 'none', type: 'HTTPS', value: '0 .' },
    { name: 'deleg', type: 'NS', value: 'ns.deleg.svc.example' },
    { name: 'ns.deleg', type: 'A', value: '192.0.2.99' },
    { name: 'cut', type: 'HTTPS', value: '1 ns.deleg.svc.example alpn=h2' },
  ]),
]);

const ask = (qname: string, qtype: number) => answer(index, { qname, qtype }, {});
const names = (sets: RRset[]) => sets.map((s) => `${s.name}/${s.type}`);

describe('HTTPS and SVCB answers', () => {
  it('HTTPS at the apex beside the A/AAAA the service gives it, with those addresses added', () => {
    const https = ask('svc.example', QTYPE.HTTPS);
    expect(names(https.answer)).toEqual(['svc.example/65']);
    expect(https.answer[0]!.rdata[0]).toMatchObject({ type: 65, priority: 1, target: '' });
    // ServiceMode "." is the owner itself: its addresses go in ADDITIONAL.
    expect(names(https.additional)).toEqual(['svc.example/1']);
    expect(names(ask('svc.example', QTYPE.A).answer)).toEqual(['svc.example/1']);
  });

  it('HTTPS at a CNAME follows the CNAME as other types do', () => {
    const https = ask('www.svc.example', QTYPE.HTTPS);
    expect(names(https.answer)).toEqual(['www.svc.example/5', 'svc.example/65']);
  });

  it('ServiceMode: the in-zone target\'s A and AAAA; targets outside the zone add nothing', () => {
    const https = ask('api.svc.example', QTYPE.HTTPS);
    expect(https.answer[0]!.rdata).toHaveLength(2);
    expect(names(https.additional)).toEqual(['pool.svc.example/1', 'pool.svc.example/28']);
    const svcb = ask('_dns.svc.example', QTYPE.SVCB);
    expect(names(svcb.additional)).toEqual(['ns.svc.example/1']);
  });

  it('AliasMode: the target\'s own HTTPS set and its addresses; "." adds nothing', () => {
    const alias = ask('alias.svc.example', QTYPE.HTTPS);
    expect(names(alias.additional)).toEqual(['pool.svc.example/65', 'pool.svc.example/1', 'pool.svc.example/28']);
    expect(ask('none.svc.example', QTYPE.HTTPS).additional).toEqual([]);
  });

  it('a target under a delegation is not ours to add', () => {
    expect(ask('cut.svc.example', QTYPE.HTTPS).additional).toEqual([]);
  });

  it('NODATA for HTTPS where only addresses are', () => {
    const none = ask('pool.svc.example', QTYPE.SVCB);
    expect(none.answer).toEqual([]);
    expect(names(none.authority)).toEqual(['svc.example/6']);
  });
});

describe('SVCB RDATA on the wire', () => {
  it('matches the octets NSD sends for the same record (target uncompressed, keys in order)', () => {
    const zone = makeZone({ domain: 'x.example' }, [
      {
        name: 'c',
        type: 'SVCB',
        value: '2 svc.x.example. ipv6hint=2001:db8::1,2001:db8::53:1 ech=AEn+DQBFKwAgACABWIHUGj4u+PIggYXcR5JF0gYk3dCRioBW8uJq9H4mKAAIAAEAAQABAANAEnB1YmxpYy50bHMtZWNoLmRldgAA',
      },
    ]);
    const set = answer(indexWith([zone]), { qname: 'c.x.example', qtype: QTYPE.SVCB }, {}).answer[0]!;
    const w = new WireWriter();
    w.name('svc.x.example'); // a name written before: the target must still not point at it
    const start = w.offset;
    writeRdata(w, set.rdata[0]!);
    // `dig +unknownformat` of NSD's answer for this line.
    const nsd = [
      '0002037376630178076578616D706C65000005004B0049FE0D00452B',
      '00200020015881D41A3E2EF8F2208185DC479245D20624DDD0918A80',
      '56F2E26AF47E26280008000100010001000340127075626C69632E74',
      '6C732D6563682E64657600000006002020010DB80000000000000000',
      '0000000120010DB8000000000000000000530001',
    ].join('');
    expect(w.finish().subarray(start).toString('hex').toUpperCase()).toBe(nsd);
  });
});
