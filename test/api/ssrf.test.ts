// Server-side request forgery through the real API, private backends and webhooks NOT allowed:
// backends, failovers and webhook receivers that are the operator's loopback, private networks or
// metadata service in an IPv6 spelling (IPv4-mapped, SIIT, NAT64, 6to4, Teredo) are refused with
// the reason, and a webhook stored before the rule existed is not delivered to one.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryWorker } from '../../src/notify/delivery-worker.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

let api: TestApi;
let key: string;
let owner: number;
let receiver: TestReceiver;
let port: number;

beforeAll(async () => {
  api = await startApi({ PALISADE_ALLOW_PRIVATE_BACKENDS: 'false', PALISADE_WEBHOOK_ALLOW_PRIVATE: 'false' });
  ({ key, user: { id: owner } } = await api.user());
  // A real receiver on the loopback: what a forged request would reach.
  receiver = await startReceiver();
  port = Number(new URL(receiver.url).port);
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

const BAD = [
  ['[::ffff:127.0.0.1]:8080', /127\.0\.0\.1 \(IPv4-mapped\), a loopback address/],
  ['[::ffff:7f00:1]', /127\.0\.0\.1 \(IPv4-mapped\), a loopback address/],
  ['[::ffff:169.254.169.254]', /169\.254\.169\.254 \(IPv4-mapped\), a link-local address/],
  ['[::ffff:10.0.0.1]', /10\.0\.0\.1 \(IPv4-mapped\), a private address/],
  ['[::ffff:0:127.0.0.1]', /127\.0\.0\.1 \(SIIT IPv4-translated\)/],
  ['[64:ff9b::7f00:1]', /127\.0\.0\.1 \(NAT64\)/],
  ['[2002:7f00:1::]', /127\.0\.0\.1 \(6to4\)/],
  ['[2001:0:4136:e378:8000:63bf:80ff:fffe]:6379', /127\.0\.0\.1 \(Teredo client\)/],
  ['[::127.0.0.1]:22', /127\.0\.0\.1 \(IPv4-compatible\)/],
  ['198.18.0.1', /benchmarking/],
] as const;

describe('backends and failovers', () => {
  it('the server under test does not allow private backends', () => {
    expect(api.app.config.allowPrivateBackends).toBe(false);
    expect(api.app.config.notify.allowPrivate).toBe(false);
  });

  it.each(BAD)('POST /domains refuses backend %s, saying why', async (backend, reason) => {
    const res = await api.request('POST', '/domains', { key, body: { domain: 'forged.example', backend } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'backend', message: expect.stringMatching(reason) })]);
    expect(res.body.errors[0].message).toMatch(/PALISADE_ALLOW_PRIVATE_BACKENDS/);
  });

  it.each(BAD)('POST /domains refuses failover %s', async (failover, reason) => {
    const res = await api.request('POST', '/domains', { key, body: { domain: 'forged.example', backend: '198.51.100.1', failover } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'failover', message: expect.stringMatching(reason) })]);
  });

  it('PATCH refuses them too and leaves the domain as it was', async () => {
    const created = await api.request('POST', '/domains', { key, body: { domain: 'patched.example', backend: '198.51.100.1', failover: '198.51.100.2' } });
    expect(created.status).toBe(201);
    for (const [text, reason] of BAD) {
      for (const field of ['backend', 'failover']) {
        const res = await api.request('PATCH', '/domains/patched.example', { key, body: { [field]: text } });
        expect(res.status, `${field} ${text}`).toBe(400);
        expect(res.body.errors, `${field} ${text}`).toEqual([expect.objectContaining({ field, message: expect.stringMatching(reason) })]);
      }
    }
    expect((await api.request('GET', '/domains/patched.example', { key })).body).toEqual(created.body);
    expect((await api.request('GET', '/domains/forged.example', { key })).status).toBe(404);
  });

  it('accepts public addresses, an IPv4-mapped one stored as the IPv4 address it is', async () => {
    const mapped = await api.request('POST', '/domains', { key, body: { domain: 'mapped.example', backend: '[::ffff:8.8.8.8]:8443', failover: '[2606:4700::1111]' } });
    expect(mapped.status).toBe(201);
    expect(mapped.body).toMatchObject({ backend: '8.8.8.8:8443', failover: '2606:4700::1111' });
    const nat64 = await api.request('PATCH', '/domains/mapped.example', { key, body: { failover: '[64:ff9b::808:808]:80' } });
    expect(nat64.status).toBe(200);
    expect(nat64.body.failover).toBe('64:ff9b::808:808');
  });
});

describe('webhooks', () => {
  it.each([
    () => `http://[::ffff:127.0.0.1]:${port}/hook`,
    () => `http://[::ffff:7f00:1]:${port}/hook`,
    () => `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/hook`,
    () => `http://[64:ff9b::7f00:1]:${port}/hook`,
    () => `http://[2002:7f00:1::1]:${port}/hook`,
    () => 'http://[::ffff:169.254.169.254]/latest/meta-data/',
    () => 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
    () => 'http://[::ffff:10.0.0.1]:6379/',
  ])('refuses receiver %#, saying why', async (url) => {
    const res = await api.request('POST', '/me/webhooks', { key, body: { url: url() } });
    expect(res.status, url()).toBe(422);
    expect(res.body.detail).toMatch(/embeds .*public addresses only/);
  });

  it('delivers nothing to a receiver registered before the rule, and the log says why', async () => {
    // As a webhook stored by an earlier version would be: written past the API's check.
    const hook = await api.app.notify.webhooks.create(owner, { url: `http://[::ffff:127.0.0.1]:${port}/hook` });
    const worker = new DeliveryWorker({ store: api.store, webhooks: api.app.notify.webhooks, log: pino({ level: 'silent' }), retryBaseMs: 60_000, maxAttempts: 3, timeoutMs: 2000, allowPrivate: false });
    worker.start();
    try {
      expect((await api.request('POST', `/me/webhooks/${hook.id}/test`, { key })).status).toBe(202);
      let attempts: Array<{ status?: number; error?: string }> = [];
      const deadline = Date.now() + 10_000;
      while (attempts.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        attempts = (await api.request('GET', `/me/webhooks/${hook.id}/deliveries`, { key })).body[0]?.attempts ?? [];
      }
      expect(attempts).toEqual([expect.objectContaining({ error: expect.stringMatching(/^::ffff:7f00:1 embeds 127\.0\.0\.1 \(IPv4-mapped\), a loopback address .*; webhooks go to public addresses only$/) })]);
      expect(receiver.received).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
