// A request body must keep coming, and must end: Apache mod_reqtimeout's `body=10-300,MinRate=500`.
// The body has `graceMs`, extended by one second for every `minRate` bytes received, but never
// past `maxMs` from its start; overdue, the request ends with 408 (and with it the backend's
// request and its pooled connection). Silence alone is bounded by the client timeout, but a body
// sent a byte every few seconds never falls silent (600 such POSTs held one domain's whole backend
// pool), and one sent at twice the least pace kept its backend connection for as long as it
// lasted: the maximum is what no pace can extend. Measured on the socket's byte count, so the body
// stream itself is never touched; where one connection carries several bodies at once (HTTP/2), on
// the request's own count, which the front keeps (else the other streams' bytes would extend it).
import type { IncomingMessage } from 'node:http';

export interface BodyPaceOptions {
  /** Time a body gets before bytes must have earned more (a slow start on a mobile link is normal). */
  graceMs: number;
  /** Each `minRate` bytes received extend the deadline by a second; 0: no pace is asked for. */
  minRate: number;
  /** The longest a body may take from its start, whatever its pace; 0: no maximum. */
  maxMs: number;
}

export const DEFAULT_BODY_PACE: BodyPaceOptions = { graceMs: 10_000, minRate: 500, maxMs: 300_000 };

/** Why a body was ended: below the least pace, or past its maximum. */
export type BodyOverdue = 'slow' | 'too-long';

const CHECK_MS = 1000;

/** Whether a request carries a body that is still to come. */
export function bodyExpected(req: IncomingMessage): boolean {
  if (req.complete) return false;
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Pure: whether a body `elapsedMs` into its arrival, `received` bytes in, is overdue (and why),
 * or undefined while it is within its deadline.
 */
export function bodyOverdue(options: BodyPaceOptions, elapsedMs: number, received: number): BodyOverdue | undefined {
  if (options.maxMs > 0 && elapsedMs >= options.maxMs) return 'too-long';
  if (options.minRate > 0 && elapsedMs > options.graceMs + (received * 1000) / options.minRate) return 'slow';
  return undefined;
}

/** What a request without a body has to stop (one function for all of them). */
const NOTHING_TO_STOP = (): void => undefined;

/**
 * Watches `req`'s body until it is complete (or the request is over); calls `overdue` once when
 * the body passes its deadline. Its bytes received: `bodyBytesRead` where the front counts them
 * (a connection carrying other requests' too), else the socket's. Returns a function that stops watching.
 */
export function watchBodyPace(req: IncomingMessage, options: BodyPaceOptions, bodyBytesRead: (() => number) | undefined, overdue: (why: BodyOverdue) => void): () => void {
  if ((options.minRate <= 0 && options.maxMs <= 0) || !bodyExpected(req)) return NOTHING_TO_STOP;
  const socket = req.socket;
  const received = bodyBytesRead ?? (() => socket.bytesRead);
  const started = performance.now();
  const startBytes = received();
  const timer = setInterval(() => {
    if (req.complete || socket.destroyed) return stop();
    const why = bodyOverdue(options, performance.now() - started, received() - startBytes);
    if (why) {
      stop();
      overdue(why);
    }
  }, CHECK_MS);
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    req.off('end', stop);
  };
  req.once('end', stop);
  return stop;
}
