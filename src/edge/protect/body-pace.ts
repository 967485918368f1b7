// A request body must keep coming: after a grace period it must have averaged at least `minRate`
// bytes a second (Apache mod_reqtimeout's `body=…,MinRate=500`), or the request ends with 408.
// Silence alone is bounded by the client timeout, but a body sent a byte every few seconds never
// falls silent, and 600 such POSTs held one domain's whole backend pool for everyone else.
// Measured on the socket's byte count, so the body stream itself is never touched.
import type { IncomingMessage } from 'node:http';

export interface BodyPaceOptions {
  /** Time a body gets before its rate is judged (a slow start on a mobile link is normal). */
  graceMs: number;
  /** Least average bytes per second once the grace is over; 0 turns the check off. */
  minRate: number;
}

export const DEFAULT_BODY_PACE: BodyPaceOptions = { graceMs: 10_000, minRate: 500 };

const CHECK_MS = 1000;

/** Whether a request carries a body that is still to come. */
export function bodyExpected(req: IncomingMessage): boolean {
  if (req.complete) return false;
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Watches `req`'s body until it is complete (or the request is over); calls `tooSlow` once when
 * the body falls behind the pace. Returns a function that stops watching.
 */
/** What a request without a body has to stop (one function for all of them). */
const NOTHING_TO_STOP = (): void => undefined;

export function watchBodyPace(req: IncomingMessage, options: BodyPaceOptions, tooSlow: () => void): () => void {
  if (options.minRate <= 0 || !bodyExpected(req)) return NOTHING_TO_STOP;
  const socket = req.socket;
  const started = performance.now();
  const startBytes = socket.bytesRead;
  const timer = setInterval(() => {
    if (req.complete || socket.destroyed) return stop();
    const elapsed = performance.now() - started;
    if (elapsed < options.graceMs) return;
    const rate = ((socket.bytesRead - startBytes) * 1000) / elapsed;
    if (rate < options.minRate) {
      stop();
      tooSlow();
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
