// The logging phase: each request counted by status and cache once answered (/metrics), and its
// access log line (access-log.ts) once the response is over (or the client gone) — a proxied
// response may be over before the walk returns, so the line waits for both.
import type { EdgeParts } from './stage/parts.ts';
import type { LoggingStage } from './stage/stage.ts';

export function requestMetricsStage(parts: EdgeParts): LoggingStage {
  return {
    phase: 'logging',
    name: 'requests by status and cache → /metrics',
    answered(ctx) {
      parts.metrics.request(ctx.outcome!.status, ctx.outcome!.cache ?? 'NONE', ctx.protocol);
    },
  };
}

export function accessLogStage(parts: EdgeParts): LoggingStage {
  return {
    phase: 'logging',
    name: 'access log line, one per request',
    ended(ctx) {
      const o = ctx.outcome!;
      const { req, res } = ctx;
      parts.accessLog.write({
        domain: o.domain,
        host: ctx.logHost,
        method: req.method,
        path: ctx.path,
        scheme: ctx.scheme,
        protocol: ctx.protocol,
        status: o.status,
        bytes: o.bytes ?? (Number(res.getHeader('content-length')) || 0),
        cache: o.cache,
        blocked: o.blocked,
        ref: o.ref,
        upstreamMs: o.upstreamMs === undefined ? undefined : Math.round(o.upstreamMs * 100) / 100,
        via: o.via,
        ms: Math.round((performance.now() - ctx.started) * 100) / 100,
        client: ctx.client,
        complete: res.writableFinished,
        upgrade: ctx.upgrade ? true : undefined,
      });
    },
  };
}
