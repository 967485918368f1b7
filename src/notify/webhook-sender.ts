// One POST of an event to a customer's webhook: signed like the change feed's pushes
// (X-Palisade-Signature: sha256=HMAC(secret, "TIMESTAMP.BODY")), bounded in time, and never to
// our own networks: the receiver's name is resolved here and every address it has must be public
// (unless the operator allows private ones), and the connection goes to the address checked — so
// a customer cannot aim our servers at a metadata service, Redis or an admin port, not even by a
// name that changes its answer between check and use, nor by an IPv6 spelling of such an address
// (::ffff:127.0.0.1, 64:ff9b::a9fe:a9fe: ../model/ip.ts judges what an address embeds). The
// check runs at registration and again at every attempt: a name may point elsewhere later.
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { nonPublicReason } from '../model/ip.ts';
import { signNotification } from '../sync/notifier.ts';

export interface SendResult {
  status?: number;
  error?: string;
  ms: number;
}

/** Every address of a name. */
export type ResolveName = (name: string) => Promise<Array<{ address: string; family: number }>>;

/** The system's resolver, as any other connection of this host would use. */
const systemResolver: ResolveName = (name) => dnsLookup(name, { all: true });

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Where receivers' names are looked up; the system's resolver when absent. */
  resolve?: ResolveName;
}

/** The address to connect to, or why not. */
export async function resolveReceiver(host: string, allowPrivate: boolean, resolve: ResolveName = systemResolver): Promise<{ address: string; family: number } | { error: string }> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(bare) !== 0) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await resolve(bare);
    } catch (error) {
      return { error: `${bare} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
    }
  }
  if (addresses.length === 0) return { error: `${bare} has no address` };
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const reason = nonPublicReason(address);
      if (reason) return { error: `${address === bare ? address : `${bare} → ${address}`} ${reason}; webhooks go to public addresses only` };
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
  const resolved = await resolveReceiver(target.hostname, options.allowPrivate, options.resolve);
  if ('error' in resolved) return { error: resolved.error, ms: elapsed() };
  if (signal.aborted) return { error: `no answer within ${options.timeoutMs} ms`, ms: elapsed() };
  const timestamp = Math.floor(Date.now() / 1000);
  // Asked with `all` (Node tries families in turn when the URL has a name): a list of the one.
  const pinned: LookupFunction = (_host, opts, callback) =>
    opts.all ? callback(null, [{ address: resolved.address, family: resolved.family }]) : callback(null, resolved.address, resolved.family);
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
