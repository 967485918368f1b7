// Transfers made a message at a time: a zone changed while its transfer is being sent still
// arrives whole at the serial asked (the zone's names are taken at the request: a change patches
// the served zone's name map in place); a secondary's transfers past its bound wait their turn in
// order, and one whose connection goes leaves the line or frees its slot.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyBatch } from '../../../src/dns/zone/apply.ts';
import { Secondaries } from '../../../src/dns/transfer/secondaries.ts';
import { TransferSlots } from '../../../src/dns/transfer/slots.ts';
import { TransferStream } from '../../../src/dns/transfer/stream.ts';
import { Transfers } from '../../../src/dns/transfer/transfers.ts';
import { findTsig, parseTsigKey, sign, type TsigKey } from '../../../src/dns/transfer/tsig.ts';
import { createLogger } from '../../../src/log.ts';
import { decode, dns2Query } from '../../helpers/dns2-packets.ts';
import { indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const secret = randomBytes(32).toString('base64');
const NOW = Math.floor(Date.now() / 1000);
const key = parseTsigKey(`xfr:${secret}`) as TsigKey;

function names(messages: Buffer[]): string[] {
  return messages.flatMap((m) => {
    const bare = Buffer.from(m.subarray(0, findTsig(m)!.start));
    bare.writeUInt16BE(m.readUInt16BE(10) - 1, 10);
    return (decode(bare).answers as Array<{ name: string; type: number }>).map((a) => `${a.name} ${a.type}`);
  });
}

describe('a transfer sent over time', () => {
  it('is the zone at the serial it was asked at, though the zone changes meanwhile', () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({ name: `h${i}`, type: 1, value: `10.0.${i >> 8}.${i & 255}` }));
    const zone = makeZone({ domain: 's.example', mask: '' }, records, 10);
    const index = indexWith([zone]);
    const secondaries = Secondaries.of([{ name: 's', addresses: ['127.0.0.1'], port: 53, tsigKey: `xfr:${secret}`, zones: [], catalog: false }]);
    const transfers = new Transfers({ notify: false, secondaries }, index, () => 0, createLogger('silent'));
    const whole = transfers.responder.answer(sign(dns2Query('s.example', 252), key, NOW).message, 'tcp', '127.0.0.1', () => undefined)!;
    const stream = transfers.responder.respond(sign(dns2Query('s.example', 252), key, NOW).message, 'tcp', '127.0.0.1', () => undefined);
    expect(stream).toBeInstanceOf(TransferStream);
    const s = stream as TransferStream;
    let ready = false;
    s.start(() => (ready = true));
    expect(ready).toBe(true);
    const first = s.next()!;
    // A change of the zone while the rest is still to be sent: a name goes, a name comes.
    applyBatch(index, { zones: [{ name: 's.example', delta: { put: [{ id: 9001, name: 'new', type: 1, value: '192.0.2.9', ttl: 300, priority: null, target: [] }], del: [{ id: 2999, name: 'h2998' }] }, revision: 11 }] }, (n) => (n === 's.example' ? zone : undefined));
    expect(index.get('s.example')!.nodes.has('new.s.example')).toBe(true);
    const rest = s.all();
    const sent = names([first, ...rest]);
    expect(sent).toEqual(names(whole));
    expect(sent).toContain('h2998.s.example 1');
    expect(sent).not.toContain('new.s.example 1');
    expect(transfers.slots.running).toBe(0);
    transfers.close();
  });
});

describe('transfers per secondary', () => {
  it('past the bound wait in order; a slot freed starts the next; one leaving the line is skipped', () => {
    const queued: number[] = [];
    const slots = new TransferSlots(2, (_secondary, waiting) => queued.push(waiting));
    const started: string[] = [];
    const release = new Map<string, () => void>();
    for (const name of ['a', 'b', 'c', 'd', 'e']) release.set(name, slots.acquire('knot', () => started.push(name)));
    // Another secondary is not held up by this one.
    slots.acquire('nsd', () => started.push('nsd'))();
    expect(started).toEqual(['a', 'b', 'nsd']);
    expect(queued).toEqual([1, 2, 3]);
    expect([slots.running, slots.waiting]).toEqual([2, 3]);
    release.get('d')!();
    release.get('a')!();
    expect(started).toEqual(['a', 'b', 'nsd', 'c']);
    release.get('b')!();
    release.get('b')!();
    expect(started).toEqual(['a', 'b', 'nsd', 'c', 'e']);
    release.get('c')!();
    release.get('e')!();
    expect([slots.running, slots.waiting]).toEqual([0, 0]);
  });
});
