// IXFR from the journal the index's record patches feed: the differences of each change, chained
// from the serial a secondary holds; anything not held is the whole zone.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyBatch } from '../../../src/dns/zone/apply.ts';
import { Secondaries } from '../../../src/dns/transfer/secondaries.ts';
import { Transfers } from '../../../src/dns/transfer/transfers.ts';
import { findTsig, nameWire, parseTsigKey, sign, type TsigKey } from '../../../src/dns/transfer/tsig.ts';
import { createLogger } from '../../../src/log.ts';
import { decode, dns2Query } from '../../helpers/dns2-packets.ts';
import { indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const secret = randomBytes(32).toString('base64');
const key = parseTsigKey(`xfr:${secret}`) as TsigKey;
const NOW = Math.floor(Date.now() / 1000);

function ixfrQuery(name: string, serial: number): Buffer {
  const q = dns2Query(name, 251);
  const question = q.subarray(0, 12 + nameWire(name).length + 4);
  const soaRdata = Buffer.concat([nameWire('ns1.example.net'), nameWire('h.example.net'), Buffer.alloc(20)]);
  soaRdata.writeUInt32BE(serial, soaRdata.length - 20);
  const rr = Buffer.concat([nameWire(name), Buffer.from([0, 6, 0, 1, 0, 0, 0, 0, 0, soaRdata.length]), soaRdata]);
  const out = Buffer.concat([question, rr]);
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(1, 8);
  out.writeUInt16BE(0, 10);
  return sign(out, key, NOW).message;
}

/** The transfer's records as "name type data" lines (TSIG left out). */
function lines(messages: Buffer[]): string[] {
  return messages.flatMap((m) => {
    const bare = Buffer.from(m.subarray(0, findTsig(m)!.start));
    bare.writeUInt16BE(m.readUInt16BE(10) - 1, 10);
    return (decode(bare).answers as Array<{ name: string; type: number; address?: string; serial?: number }>).map((a) => `${a.name} ${a.type} ${a.address ?? a.serial ?? ''}`);
  });
}

describe('IXFR journal', () => {
  const zone = makeZone({ domain: 'j.example', mask: '' }, [{ name: 'a', type: 1, value: '192.0.2.1' }, { name: 'b', type: 1, value: '192.0.2.2' }], 10);
  const index = indexWith([zone]);
  const secondaries = Secondaries.of([{ name: 's', addresses: ['127.0.0.1'], port: 53, tsigKey: `xfr:${secret}`, zones: [], catalog: false }]);
  const transfers = new Transfers({ notify: false, secondaries }, index, () => 0, createLogger('silent'));
  const source = (name: string) => (name === 'j.example' ? zone : undefined);
  const ask = (serial: number) => transfers.responder.answer(ixfrQuery('j.example', serial), 'tcp', '127.0.0.1', () => undefined)!;

  it('two changes: from the first serial both steps, from the second only the last, from the current our SOA', () => {
    const s0 = index.get('j.example')!.serial;
    applyBatch(index, { zones: [{ name: 'j.example', delta: { put: [{ id: 3, name: 'c', type: 1, value: '192.0.2.3', ttl: 300, priority: null, target: [] }], del: [] }, revision: 11 }] }, source);
    const s1 = index.get('j.example')!.serial;
    applyBatch(index, { zones: [{ name: 'j.example', delta: { put: [], del: [{ id: 1, name: 'a' }] }, revision: 12 }] }, source);
    const s2 = index.get('j.example')!.serial;
    expect([s0, s1, s2]).toEqual([10, 11, 12]);
    expect(lines(ask(s0))).toEqual([
      'j.example 6 12',
      'j.example 6 10',
      'j.example 6 11',
      'c.j.example 1 192.0.2.3',
      'j.example 6 11',
      'a.j.example 1 192.0.2.1',
      'j.example 6 12',
      'j.example 6 12',
    ]);
    expect(lines(ask(s1))).toEqual(['j.example 6 12', 'j.example 6 11', 'a.j.example 1 192.0.2.1', 'j.example 6 12', 'j.example 6 12']);
    expect(lines(ask(s2))).toEqual(['j.example 6 12']);
  });

  it('a serial not held (older, or never ours) gets the whole zone in AXFR form', () => {
    const whole = lines(ask(3));
    expect(whole[0]).toBe('j.example 6 12');
    expect(whole.at(-1)).toBe('j.example 6 12');
    expect(whole).toContain('b.j.example 1 192.0.2.2');
    expect(whole).toContain('c.j.example 1 192.0.2.3');
    expect(whole).not.toContain('a.j.example 1 192.0.2.1');
  });
});
