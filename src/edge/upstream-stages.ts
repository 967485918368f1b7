// The upstream and response stages that belong to no protection: which backend a request goes to,
// the WebSocket upgrade (upgrade.ts), the proxy (proxy.ts), and what the backend's exchange comes
// to — figures for /metrics and uptime, a client gone, the gateway's own pages.
import type { Socket } from 'node:net';
import { backendRefusal, formatBackend, parseBackend } from '../model/backend.ts';
import type { EdgeParts } from './stage/parts.ts';
import type { WalkStage } from './stage/stage.ts';
import type { Outcome, RequestContext, UpgradeContext } from './stage/context.ts';
import { page } from './stage/answer.ts';
import { PAGES } from './pages.ts';
import { backendKey } from './backend-tenants.ts';
import { forwardedRequestHeaders, type ProxyOutcome } from './proxy.ts';
import { proxyUpgrade } from './upgrade.ts';

/**
 * The backend address (by its key) the request goes to now: the failover while the backend is down
 * and it is not (backend-health.ts). An upgrade's backend is chosen here once, and one that cannot
 * be used (none, or no public address while those are not allowed) is answered 502; a request's is
 * chosen again by the proxy, per try.
 */
export function backendStage(parts: EdgeParts): WalkStage {
  const { health } = parts;
  return {
    phase: 'upstream',
    name: 'backend, or the failover while it is down (an upgrade without one → 502)',
    run(ctx) {
      const domain = ctx.domain;
      if (!ctx.upgrade) {
        const failover = domain.failover;
        ctx.backendKey = failover && health.isDownText(domain.backend) && !health.isDownText(failover) ? backendKey(failover) : backendKey(domain.backend);
        return undefined;
      }
      const backend = parseBackend(domain.backend);
      const failover = domain.failover ? parseBackend(domain.failover) : undefined;
      const target = backend && health.serving(backend, failover);
      if (!target || backendRefusal(target, parts.options.allowPrivateBackends)) {
        page(ctx.res, 502, PAGES.badGateway(ctx.host));
        return { status: 502, domain: domain.domain, via: target ? 'backend refused: not a public address' : 'unreachable' };
      }
      ctx.upgradeTarget = target;
      ctx.failoverChosen = target === failover;
      ctx.backendKey = backendKey(formatBackend(target));
      return undefined;
    },
  };
}

/** A WebSocket handshake: carried to the backend (upgrade.ts) instead of the proxy, joined on 101. */
export function upgradeStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'upstream',
    name: 'WebSocket handshake → upgrade.ts',
    run(ctx) {
      // Not async itself: a request that is no upgrade passes on in the same turn.
      return ctx.upgrade ? carry(parts, ctx, ctx.upgrade) : undefined;
    },
  };
}

async function carry(parts: EdgeParts, ctx: RequestContext, upgrade: UpgradeContext): Promise<Outcome> {
  const { req, res, domain, host, scheme, client } = ctx;
  const target = ctx.upgradeTarget!;
  const release = ctx.releaseShare!;
  const headers = forwardedRequestHeaders(req, client, scheme, host);
  const idleMs = parts.options.upgradeIdleMs ?? 100_000;
  // From here the backend's answer is bounded by the response timeout (proxyUpgrade), not the client's silence.
  (upgrade.socket as Socket).setTimeout?.(0);
  let result: ProxyOutcome;
  try {
    result = await proxyUpgrade(req, res, upgrade.socket, upgrade.head, target, headers, { connectTimeoutMs: parts.options.connectTimeoutMs, responseTimeoutMs: parts.options.responseTimeoutMs, idleMs });
  } finally {
    if (upgrade.socket.destroyed) release();
  }
  if (result.status !== 101) release();
  if (!res.headersSent && result.via === 'unreachable' && result.status === 502) page(res, 502, PAGES.badGateway(host));
  else if (!res.headersSent && result.via === 'timeout') page(res, 504, PAGES.gatewayTimeout(host));
  return { status: result.status, domain: domain.domain, upstreamMs: result.upstreamMs, via: ctx.failoverChosen ? 'failover' : result.via };
}

/** The backend (or the failover while it is down), through proxy.ts; what it came to is the response phase's. */
export function proxyStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'upstream',
    name: 'proxy → backend or failover',
    async run(ctx) {
      ctx.upstream = await parts.proxy.forward(ctx);
      return undefined;
    },
  };
}

/** How the exchange went, for /metrics and the uptime report; a client that left (or was ended: 408) says nothing of the backend's health. */
export function upstreamFiguresStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'response',
    name: 'upstream figures → /metrics, uptime; a client gone → 499',
    run(ctx) {
      const result = ctx.upstream!;
      const domain = ctx.domain.domain;
      if (result.via === 'client-gone') return { status: ctx.res.headersSent ? ctx.res.statusCode : 499, cache: ctx.cacheStatus, via: result.via, domain };
      parts.metrics.upstream(domain, upstreamKind(result), result.upstreamMs);
      parts.uptime.requested(domain, upstreamKind(result), result.upstreamMs);
      return undefined;
    },
  };
}

/** The backend's answer passed on, or the gateway's page for none: 502 unreachable, 504 timeout, 413 too large. */
export function gatewayStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'response',
    name: 'the backend answered, or 502/504/413 pages',
    run(ctx) {
      const { res, host } = ctx;
      const result = ctx.upstream!;
      const unreachable = isUnreachable(result);
      if (unreachable && !res.headersSent) page(res, 502, PAGES.badGateway(host));
      else if (result.via === 'timeout' && !res.headersSent) page(res, 504, PAGES.gatewayTimeout(host));
      else if (result.via === 'too-large' && !res.headersSent) page(res, 413, PAGES.tooLarge(parts.options.maxBodyBytes), { connection: 'close' });
      return { status: unreachable ? 502 : result.status, cache: ctx.cacheStatus, upstreamMs: result.upstreamMs, bytes: result.bytes, via: result.via, domain: ctx.domain.domain };
    },
  };
}

function isUnreachable(result: ProxyOutcome): boolean {
  return result.via === 'unreachable' || result.via === 'refused';
}

function upstreamKind(result: ProxyOutcome): 'timeout' | 'unreachable' | 'error-status' | 'ok' {
  if (result.via === 'timeout') return 'timeout';
  if (isUnreachable(result)) return 'unreachable';
  return result.status >= 500 && result.status !== 501 && result.status !== 505 ? 'error-status' : 'ok';
}
