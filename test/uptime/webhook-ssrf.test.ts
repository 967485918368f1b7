// A webhook receiver's name is judged by what it resolves to at each attempt, IPv6 spellings of our
// own networks included: names served by a real DNS server (Palisade's own, on loopback) that answer
// ::ffff:127.0.0.1 — the loopback, where a real receiver listens — are not delivered to.
import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendEvent, type ResolveName } from '../../src/notify/webhook-sender.ts';
import { makeZone } from '../helpers/dns-fixture.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

let dns: TestDns;
let receiver: TestReceiver;
let port: number;
let resolve: ResolveName;

beforeAll(async () => {
  dns = await startDns([
    makeZone({ domain: 'evil.example' }, [
      { name: 'hook', type: 2, value: '::ffff:127.0.0.1' },
      { name: 'nat64', type: 2, value: '64:ff9b::7f00:1' },
      // One public address beside the mapped loopback: every address must be public.
      { name: 'mixed', type: 1, value: '198.51.100.9' },
      { name: 'mixed', type: 2, value: '::ffff:7f00:1' }, // served as ::ffff:127.0.0.1,
    ]),
  ]);
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dns.port}`]);
  resolve = async (name) => {
    const none = () => [] as string[];
    const [v4, v6] = await Promise.all([resolver.resolve4(name).catch(none), resolver.resolve6(name).catch(none)]);
    return [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
  };
  receiver = await startReceiver();
  port = Number(new URL(receiver.url).port);
});
afterAll(async () => {
  await receiver.close();
  await dns.close();
});

const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test', domain: null, created: new Date().toISOString(), data: {} });

describe('a webhook whose name resolves to our own networks', () => {
  it('reaches the receiver only where the operator allows private receivers (the name does resolve there)', async () => {
    const result = await sendEvent(`http://hook.evil.example:${port}/hook`, 'k', body, {}, { timeoutMs: 2000, allowPrivate: true, resolve });
    expect(result).toMatchObject({ status: 204 });
    expect(receiver.received).toHaveLength(1);
  });

  it.each([
    ['hook', /hook\.evil\.example → ::ffff:127\.0\.0\.1 embeds 127\.0\.0\.1 \(IPv4-mapped\), a loopback address/],
    ['nat64', /nat64\.evil\.example → 64:ff9b::7f00:1 embeds 127\.0\.0\.1 \(NAT64\)/],
    ['mixed', /mixed\.evil\.example → ::ffff:127\.0\.0\.1 embeds 127\.0\.0\.1 \(IPv4-mapped\)/],
  ])('%s.evil.example is not delivered to, and the attempt says why', async (name, reason) => {
    const before = receiver.received.length;
    const result = await sendEvent(`http://${name}.evil.example:${port}/hook`, 'k', body, {}, { timeoutMs: 2000, allowPrivate: false, resolve });
    expect(result.status).toBeUndefined();
    expect(result.error).toMatch(reason);
    expect(result.error).toMatch(/webhooks go to public addresses only/);
    expect(receiver.received.length).toBe(before);
  });
});
