// baseprotection's stages, one per phase it joins: in the request head the client's rate and ban
// (client-limits.ts), the body buffer budget (../protect/body-buffer-budget.ts), the protocol
// checks and the head's rules; in the body phase the body read and its rules (body-inspection.ts);
// in the response phase the verdict of the tail watch (body-tail.ts) over the rest of a body past
// the inspection limit. ../chain.ts puts them in order. Each passes on a domain without baseprotection.
import type { EdgeParts } from '../stage/parts.ts';
import type { WalkStage } from '../stage/stage.ts';
import type { Outcome, RequestContext } from '../stage/context.ts';
import { page, refuse } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { closeAfterAnswer } from '../close-unread.ts';
import { bodyHold, inspectBody, inspectHead, type RequestVerdict } from './inspect-request.ts';

export function clientLimitStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'baseprotection: client rate and ban → 429/403',
    run(ctx) {
      if (!ctx.domain.baseprotection) return undefined;
      const limited = parts.clientLimits.check(ctx.client);
      if (!limited) return undefined;
      const host = ctx.host;
      const html = (ref: string) => (limited.reason === 'banned' ? PAGES.banned(host, limited.retryAfter, ref) : PAGES.rateLimited(host, ref));
      return refuse(parts.metrics, ctx.res, ctx.domain.domain, limited.reason, html, limited.status, { 'retry-after': String(limited.retryAfter) });
    },
  };
}

/**
 * The body's bytes are taken from the buffer budget before the WAF reads any of them, and given
 * back when the exchange ends, however it ends (answered, refused, failed, client gone). No room:
 * 429 past the client's share, 503 past the node's; its bytes never read.
 */
export function bodyBufferStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'baseprotection: body buffer budget → 429/503',
    run(ctx) {
      if (!ctx.domain.baseprotection) return undefined;
      const hold = bodyHold(ctx.req.headers, ctx.domain);
      if (hold <= 0) return undefined;
      const taken = parts.bodyBuffer.reserve(ctx.client, hold);
      if (taken.ok) {
        ctx.res.once('close', taken.release);
        return undefined;
      }
      const spent = taken.reason;
      const html = spent === 'client' ? (ref: string) => PAGES.bodiesBusy(ctx.host, ref) : (ref: string) => PAGES.edgeBusy(ctx.host, ref);
      // The body is still arriving, and is not to be read: the connection ends after the answer (close-unread.ts).
      closeAfterAnswer(ctx.res);
      return refuse(parts.metrics, ctx.res, ctx.domain.domain, `body-buffer-${spent}`, html, spent === 'client' ? 429 : 503, { 'retry-after': '1' });
    },
  };
}

/** Protocol checks, and the rules over a bodiless request: refused, logged, or passed on; a body announced goes to the body phase. */
export function headInspectionStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: "baseprotection: protocol checks, the head's rules → 400/403",
    run(ctx) {
      if (!ctx.domain.baseprotection) return undefined;
      const { req } = ctx;
      const verdict = inspectHead(req.method ?? 'GET', ctx.url, req.headers, req.rawHeaders.length / 2, ctx.domain);
      if (verdict) return wafVerdict(parts, ctx, verdict);
      ctx.wafReadsBody = true;
      return undefined;
    },
  };
}

/** The body read (up to the domain's limit, within the budget taken), then the rules: one promise, the WAF's own. */
export function bodyInspectionStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'body',
    name: 'baseprotection: the body read, its rules → 403/413/415',
    run(ctx) {
      if (!ctx.wafReadsBody) return undefined;
      const { req } = ctx;
      return inspectBody(req, req.method ?? 'GET', ctx.url, req.headers, ctx.domain).then((verdict) => wafVerdict(parts, ctx, verdict));
    },
  };
}

/** Acts on the WAF's verdict: a refusal, a finding only logged, or passed on with the body it read whole. */
function wafVerdict(parts: EdgeParts, ctx: RequestContext, verdict: RequestVerdict): Outcome | undefined {
  const { res, client, host } = ctx;
  const domain = ctx.domain.domain;
  if (verdict.cut) {
    if (!res.headersSent) page(res, 400, PAGES.badRequest());
    return { status: 400, domain, via: 'body cut short' };
  }
  const { finding, body } = verdict;
  ctx.inspectedBody = body;
  if (!finding) {
    ctx.bodyWatch = verdict.tail;
    return undefined;
  }
  if (verdict.logOnly) {
    parts.log.warn({ domain, client, rule: finding.rule, class: finding.class, where: finding.where }, 'waf: would refuse (log only)');
    return undefined;
  }
  parts.clientLimits.refused(client);
  const reason = finding.class === 'protocol' ? 'protocol' : finding.class === 'scanner' ? 'scanner' : 'waf';
  // A body refused for its size, type or charset is told so; an attack gets the protection page.
  const html = bodyRefusal(finding) ? (ref: string) => PAGES.bodyRefused(host, finding.where, ref) : (ref: string) => PAGES.wafBlocked(host, ref);
  const refused = refuse(parts.metrics, res, domain, reason, html, finding.status);
  return { ...refused, via: `rule ${finding.rule} (${finding.class}) in ${finding.where}` };
}

/**
 * Response phase: what the tail watch found in the rest of a body past the inspection limit, as
 * the proxy sent it — logged (log only), refused (the upload was cut off before its last bytes),
 * or, the response begun already, the connection ended.
 */
export function tailVerdictStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'response',
    name: "baseprotection: the tail watch's verdict → 403/413/415",
    run(ctx) {
      const tail = ctx.bodyWatch?.finding;
      if (!tail) return undefined;
      const { res, client, host } = ctx;
      const domain = ctx.domain.domain;
      if (ctx.upstream!.via !== 'body-refused') parts.log.warn({ domain, client, rule: tail.rule, class: tail.class, where: tail.where }, 'waf: would refuse (log only)');
      else if (!res.headersSent) {
        parts.clientLimits.refused(client);
        const refused = refuse(parts.metrics, res, domain, 'waf', (ref) => (bodyRefusal(tail) ? PAGES.bodyRefused(host, tail.where, ref) : PAGES.wafBlocked(host, ref)), tail.status);
        return { ...refused, via: `rule ${tail.rule} (${tail.class}) in ${tail.where}` };
      } else res.destroy();
      return undefined;
    },
  };
}

/** A protocol finding about the body itself (413 too large, 415 type or charset), not an attack in it. */
function bodyRefusal(finding: { status: number; class: string }): boolean {
  return finding.class === 'protocol' && (finding.status === 413 || finding.status === 415);
}
