// A real HTTP server standing for a customer's webhook receiver: it records every request
// (arrival time, headers, body) and may fail the first few with a status of the test's choosing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

export interface Received {
  at: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: { id: string; type: string; domain: string | null; created: string; data: Record<string, unknown> };
  status: number;
}

export interface TestReceiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(options: { failFirst?: number; failStatus?: number; host?: string; delayMs?: number } = {}): Promise<TestReceiver> {
  const received: Received[] = [];
  let failures = options.failFirst ?? 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const status = failures > 0 ? (options.failStatus ?? 503) : 204;
      if (failures > 0) failures--;
      received.push({ at: Date.now(), headers: req.headers, body, json: JSON.parse(body) as Received['json'], status });
      res.statusCode = status;
      if (options.delayMs) setTimeout(() => res.end(), options.delayMs);
      else res.end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Whether a received request carries the signature the webhook's secret makes. */
export function signatureValid(r: Received, secret: string): boolean {
  const timestamp = String(r.headers['x-palisade-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`;
  const given = String(r.headers['x-palisade-signature']);
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
