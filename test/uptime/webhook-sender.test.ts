// One webhook POST against real receivers on loopback: signed, not redirected, and bounded by one
// deadline however slowly a receiver trickles its answer.
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { sendEvent } from '../../src/notify/webhook-sender.ts';
import { signatureValid, startReceiver } from '../helpers/webhook-receiver.ts';

const closers: Array<() => void> = [];
afterAll(() => closers.forEach((c) => c()));

const options = { timeoutMs: 500, allowPrivate: true };

describe('a webhook POST', () => {
  it('is signed over the timestamp and body, with the event headers', async () => {
    const receiver = await startReceiver();
    closers.push(() => void receiver.close());
    const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test', domain: null, created: new Date().toISOString(), data: {} });
    const result = await sendEvent(receiver.url, 'k3y', body, { 'x-palisade-event': 'webhook.test', 'x-palisade-delivery': 'dlv_1' }, options);
    expect(result.status).toBe(204);
    const [got] = receiver.received;
    expect(signatureValid(got!, 'k3y')).toBe(true);
    expect(signatureValid(got!, 'other')).toBe(false);
    expect(got!.headers).toMatchObject({ 'x-palisade-event': 'webhook.test', 'x-palisade-delivery': 'dlv_1', 'content-type': 'application/json' });
  });

  it('does not follow a redirect (the receiver did not take the event)', async () => {
    const server = createHttpServer((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const result = await sendEvent(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, 'k', '{}', {}, options);
    expect(result.status).toBe(302);
  });

  it('gives up at the deadline when a receiver trickles its answer byte by byte', async () => {
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
      const text = 'HTTP/1.1 200 OK\r\nX-Slow: ' + 'a'.repeat(100);
      let i = 0;
      const timer = setInterval(() => (i < text.length && !socket.destroyed ? socket.write(text[i++]!) : clearInterval(timer)), 50);
      socket.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => {
      for (const s of sockets) s.destroy();
      server.close();
    });
    const started = Date.now();
    const result = await sendEvent(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, 'k', '{}', {}, options);
    expect(result.error).toMatch(/no answer within 500 ms/);
    // Given up at 500 ms; a time-out that each dripped byte restarted would run for the whole
    // drip, ~125 bytes at one per 50 ms: over 6 s. 4 s leaves a loaded machine its room.
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('refuses an internal address unless allowed, before connecting', async () => {
    const result = await sendEvent('http://127.0.0.1:9/', 'k', '{}', {}, { timeoutMs: 500, allowPrivate: false });
    expect(result.error).toMatch(/public addresses only/);
  });
});
