// One POST of an event to a customer's webhook: signed like the change feed's pushes
// (X-Palisade-Signature: sha256=HMAC(secret, "TIMESTAMP.BODY")), bounded in time, and never to
// our own networks: the receiver's name is resolved here and every address it has must be public
// (unless the operator allows private ones), and the connection goes to the address checked — so
// a customer cannot aim our servers at a metadata service, Redis or an admin port, not even by a
// name that changes its answer between check and use.
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { nonPublicReason } from '../model/backend.ts';
import { signNotification } from '../sync/notifier.ts';

export interface SendResult {
  status?: number;
  error?: string;
  ms: number;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

/** The address to connect to, or why not. */
export async function resolveReceiver(host: string, allowPrivate: boolean): Promise<{ address: string; family: number } | { error: string }> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(bare) !== 0) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await dnsLookup(bare, { all: true });
    } catch (error) {
      return { error: `${bare} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
    }
  }
  if (addresses.length === 0) return { error: `${bare} has no address` };
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const reason = nonPublicReason(address);
      if (reason) return { error: `${bare} → ${address} ${reason}; webhooks go to public addresses only` };
    }
  }
  return addresses[0]!;
}

export async function sendEvent(url: string, secret: string, body: string, headers: Record<string, string>, options: SenderOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // One deadline for the whole attempt (the name's resolution, the connection, the answer's
  // headers): a receiver trickling bytes cannot hold a delivery slot longer.
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => resolve({ error: `no answer within ${options.timeoutMs} ms`, ms: elapsed() }), options.timeoutMs);
  });
  const abort = new AbortController();
  try {
    return await Promise.race([attempt(url, secret, body, headers, options, elapsed, abort.signal), deadline]);
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

async function attempt(url: string, secret: string, body: string, headers: Record<string, string>, options: SenderOptions, elapsed: () => number, signal: AbortSignal): Promise<SendResult> {
  const target = new URL(url);
  const resolved = await resolveReceiver(target.hostname, options.allowPrivate);
  if ('error' in resolved) return { error: resolved.error, ms: elapsed() };
  if (signal.aborted) return { error: `no answer within ${options.timeoutMs} ms`, ms: elapsed() };
  const timestamp = Math.floor(Date.now() / 1000);
  const pinned: LookupFunction = (_host, _opts, callback) => callback(null, resolved.address, resolved.family);
  return new Promise((resolve) => {
    const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
      target,
      {
        method: 'POST',
        lookup: pinned,
        // Redirects are not followed: a receiver answering 3xx has not taken the event.
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Palisade-Webhooks/1',
          'x-palisade-timestamp': String(timestamp),
          'x-palisade-signature': signNotification(secret, timestamp, body),
          ...headers,
        },
        timeout: options.timeoutMs,
        agent: false,
        signal,
      },
      (res) => {
        // The body is not needed; the connection is dropped once the attempt ends.
        res.on('error', () => undefined);
        res.resume();
        resolve({ status: res.statusCode ?? 0, ms: elapsed() });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code && !error.message.includes(error.code) ? `${error.code}: ${error.message}` : error.message, ms: elapsed() }));
    req.end(body);
  });
}
