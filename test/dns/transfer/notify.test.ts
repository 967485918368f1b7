// NOTIFY to a secondary that does not answer at first: sent again until a signed answer comes;
// an unsigned or wrongly signed answer (anyone can send a datagram) does not stop it.
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { afterAll, describe, expect, it } from 'vitest';
import { NotifySender } from '../../../src/dns/transfer/notify.ts';
import { checkNotifySources, notifySources } from '../../../src/dns/transfer/notify-source.ts';
import { Secondaries } from '../../../src/dns/transfer/secondaries.ts';
import { findTsig, parseTsigKey, sign, type TsigKey } from '../../../src/dns/transfer/tsig.ts';
import { createLogger } from '../../../src/log.ts';
import { until } from '../../helpers/until.ts';
import { indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const secret = randomBytes(32).toString('base64');
const key = parseTsigKey(`xfr:${secret}`) as TsigKey;
const wrongKey = parseTsigKey(`xfr:${randomBytes(32).toString('base64')}`) as TsigKey;
const socket = createSocket('udp4');
afterAll(() => socket.close());

/** The answer to a NOTIFY: the same header with QR set, the question, no records. */
function answerTo(request: Buffer, signWith: TsigKey | undefined): Buffer {
  const tsig = findTsig(request)!;
  const end = 12 + request.subarray(12).indexOf(0) + 1 + 4;
  const out = Buffer.from(request.subarray(0, end));
  out[2] = out[2]! | 0x80;
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(0, 8);
  out.writeUInt16BE(0, 10);
  return signWith ? sign(out, signWith, Math.floor(Date.now() / 1000), { requestMac: tsig.mac }).message : out;
}

describe('NOTIFY', () => {
  it('is sent again until a properly signed answer comes, then stops', async () => {
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    const received: Buffer[] = [];
    socket.on('message', (message, from) => {
      received.push(message);
      // 1st: ignored; 2nd: answered unsigned; 3rd: answered with the wrong key; 4th: answered right.
      const reply = received.length === 2 ? answerTo(message, undefined) : received.length === 3 ? answerTo(message, wrongKey) : received.length === 4 ? answerTo(message, key) : undefined;
      if (reply) socket.send(reply, from.port, from.address);
    });
    const secondaries = Secondaries.of([{ name: 's', addresses: ['127.0.0.1'], port, tsigKey: `xfr:${secret}`, zones: [], catalog: false }]);
    const sender = new NotifySender(secondaries, createLogger('silent'), undefined, 50);
    const zone = indexWith([makeZone({ domain: 'n.example' }, [])]).get('n.example')!;
    sender.changed('n.example', zone.soa);
    await until('four NOTIFYs', () => received.length >= 4, 10_000);
    await until('the answer counted', () => sender.answered === 1, 5_000);
    expect(sender.waiting).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(received.length).toBe(4);
    // Each is opcode NOTIFY and signed.
    for (const m of received) {
      expect((m[2]! >> 3) & 0xf).toBe(4);
      expect(findTsig(m)!.keyName).toBe('xfr');
    }
    sender.close();
  });
});

describe('NOTIFY source', () => {
  it('leaves from the configured address, not the one the kernel picks', async () => {
    const listener = createSocket('udp4');
    await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
    const from: string[] = [];
    listener.on('message', (_message, rinfo) => from.push(rinfo.address));
    const secondaries = Secondaries.of([{ name: 's', addresses: ['127.0.0.1'], port: listener.address().port, tsigKey: `xfr:${secret}`, zones: [], catalog: false }]);
    const sender = new NotifySender(secondaries, createLogger('silent'), undefined, 5000, notifySources('0.0.0.0', ['127.0.0.9']));
    const zone = indexWith([makeZone({ domain: 'n.example' }, [])]).get('n.example')!;
    sender.changed('n.example', zone.soa);
    await until('a NOTIFY', () => from.length >= 1, 5_000);
    expect(from[0]).toBe('127.0.0.9');
    sender.close();
    listener.close();
  });

  it('is the listening address when it is one, per family; the operator overrides it', () => {
    expect(notifySources('127.0.0.7')).toEqual({ v4: '127.0.0.7' });
    expect(notifySources('0.0.0.0')).toEqual({});
    expect(notifySources('::')).toEqual({});
    expect(notifySources('::1', ['192.0.2.1'])).toEqual({ v4: '192.0.2.1', v6: '::1' });
    expect(notifySources('127.0.0.7', ['127.0.0.8'])).toEqual({ v4: '127.0.0.8' });
    expect(checkNotifySources(['192.0.2.1', '2001:db8::1'])).toBeUndefined();
    expect(checkNotifySources(['192.0.2.1', '192.0.2.2'])).toMatch(/at most one IPv4/);
    expect(checkNotifySources(['ns1.example'])).toMatch(/not an IP address/);
  });
});
