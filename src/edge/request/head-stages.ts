// The request-head stages that belong to no protection: the target read once, the node's status
// page, routing, ACME, the fhttps redirect and the announced body's bound. Each is a factory over
// the edge's parts; ../chain.ts puts them in order.
import type { EdgeParts } from '../stage/parts.ts';
import type { WalkStage } from '../stage/stage.ts';
import { ACME_PREFIX } from '../stage/context.ts';
import { page, reply } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { canonicalHost, requestTarget } from '../request-target.ts';

const ACME_PING = `${ACME_PREFIX}ping`;

/**
 * Host / target read once (request-target.ts), put back on the request so that every later stage,
 * the cache key and the backend see the same (canonical Host, origin-form target); malformed → 400.
 */
export function targetStage(): WalkStage {
  return {
    phase: 'request head',
    name: 'request target, read once → 400 if malformed',
    run(ctx) {
      const { req } = ctx;
      const target = requestTarget(req.url, req.headers.host);
      if (target.kind === 'invalid') {
        ctx.path = (req.url ?? '/').split('?')[0]!;
        page(ctx.res, 400, PAGES.badRequest(), { connection: 'close' });
        return { status: 400, via: target.reason };
      }
      req.url = ctx.url = target.url;
      ctx.path = target.path;
      ctx.acme = target.path.startsWith(ACME_PREFIX);
      if (target.kind === 'name') {
        ctx.host = ctx.logHost = target.host;
        req.headers.host = canonicalHost(target.host, target.port);
      }
      return undefined;
    },
  };
}

export function statusPageStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'status page (the node address, no Host)',
    run(ctx) {
      if (ctx.host !== '') return undefined;
      page(ctx.res, 200, PAGES.status(parts.options.nodeName, parts.state.node?.status ?? 'active'));
      return { status: 200, via: 'status' };
    },
  };
}

/** Host → the domain's route (routing.ts); never answers: the stages after read `ctx.route`. */
export function routeStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'routing: Host → domain (answers nothing)',
    run(ctx) {
      ctx.route = parts.state.routes.route(ctx.host);
      return undefined;
    },
  };
}

export function acmePingStage(): WalkStage {
  return {
    phase: 'request head',
    name: 'ACME ping → pong, for every configured name',
    run(ctx) {
      if (ctx.path !== ACME_PING || ctx.route.kind === 'unknown') return undefined;
      reply(ctx.res, 200, 'text/plain', 'pong');
      return { status: 200, via: 'ping' };
    },
  };
}

export function unservedStage(): WalkStage {
  return {
    phase: 'request head',
    name: 'unknown, disabled, unbound → 421',
    run(ctx) {
      const route = ctx.route;
      if (route.kind === 'domain') {
        ctx.domain = route.domain;
        return undefined;
      }
      const html = route.kind === 'disabled' ? PAGES.disabled(ctx.host) : route.kind === 'not-bound' ? PAGES.notBound(ctx.host) : PAGES.unknown(ctx.host);
      page(ctx.res, 421, html);
      return { status: 421 };
    },
  };
}

/** Reserved for certificate issuance (HTTP-01 tokens); never passed to the backend. */
export function acmeTokenStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'ACME token → the token or 404, never the backend',
    run(ctx) {
      if (!ctx.acme) return undefined;
      const answer = parts.state.challengeAnswer(ctx.domain.domain, ctx.path.slice(ACME_PREFIX.length));
      if (answer !== undefined) {
        reply(ctx.res, 200, 'text/plain', answer);
        return { status: 200, domain: ctx.domain.domain, via: 'acme' };
      }
      reply(ctx.res, 404, 'text/plain', 'no such challenge token');
      return { status: 404, domain: ctx.domain.domain, via: 'acme' };
    },
  };
}

export function forceHttpsStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'fhttps on plain HTTP → 301/308',
    run(ctx) {
      if (ctx.scheme !== 'http' || !ctx.domain.fhttps || !parts.sni.certificateFor(ctx.host)) return undefined;
      const status = ctx.req.method === 'GET' || ctx.req.method === 'HEAD' ? 301 : 308;
      const port = parts.httpsPort === 443 ? '' : `:${parts.httpsPort}`;
      page(ctx.res, status, PAGES.moved(), { location: `https://${ctx.host}${port}${ctx.url}` });
      return { status, domain: ctx.domain.domain, via: 'fhttps' };
    },
  };
}

/** A body announced past the node's bound is refused before anything reads it. */
export function bodyBoundStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'announced body past the bound → 413',
    run(ctx) {
      const length = Number(ctx.req.headers['content-length'] ?? 0);
      if (length <= parts.options.maxBodyBytes) return undefined;
      page(ctx.res, 413, PAGES.tooLarge(parts.options.maxBodyBytes), { connection: 'close' });
      return { status: 413, domain: ctx.domain.domain };
    },
  };
}
