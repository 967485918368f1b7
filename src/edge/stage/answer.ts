// The small answers every stage gives the same way: a page or a short text with no-store, and a
// protection's refusal with a reference id that its log line carries too.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { EdgeMetrics } from '../edge-metrics.ts';
import type { Outcome } from './context.ts';

export function reply(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...extra });
  res.end(body);
}

export function page(res: ServerResponse, status: number, html: string, extra: Record<string, string> = {}): void {
  reply(res, status, 'text/html; charset=utf-8', html, extra);
}

/** A protection refused the request: its page (403 unless said) with a reference id, counted by reason. */
export function refuse(metrics: EdgeMetrics, res: ServerResponse, domain: string, reason: string, html: (ref: string) => string, status = 403, extra: Record<string, string> = {}): Outcome {
  const ref = randomBytes(8).toString('hex');
  metrics.blocked(reason);
  page(res, status, html(ref), extra);
  return { status, domain, blocked: reason, ref };
}
