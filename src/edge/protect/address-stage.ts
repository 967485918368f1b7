// IP lists (ip-lists.ts) for every path, then the domain's country rule (geo-filter.ts) — not on
// ACME paths, which skip every other protection (validation comes from the CA's many vantage points).
import type { EdgeParts } from '../stage/parts.ts';
import type { WalkStage } from '../stage/stage.ts';
import { refuse } from '../stage/answer.ts';
import type { DomainState } from '../../model/domain.ts';
import { geoTargetById } from '../../geo/targets.ts';
import { PAGES } from '../pages.ts';
import { geoBlocked } from './geo-filter.ts';

type Refusal = { reason: string; html: (ref: string) => string };

export function addressStage(parts: EdgeParts): WalkStage {
  /** Which protection refuses the client, if one does: IP lists, then (not on ACME paths) the country rule. */
  const refusal = (domain: DomainState, host: string, client: string, acme: boolean): Refusal | undefined => {
    if (parts.ipLists.blocks(domain.ownerId, client)) return { reason: 'ip-list', html: (ref) => PAGES.blockedAddress(host, client, ref) };
    if (acme || domain.geomode === 0) return undefined;
    const located = parts.options.locate?.(client).country;
    const country = (located === undefined ? undefined : geoTargetById(located)?.code) ?? 'XX';
    if (geoBlocked(domain.geomode, domain.geolist, country)) return { reason: 'geo', html: (ref) => PAGES.blockedCountry(host, country, ref) };
    return undefined;
  };
  return {
    phase: 'request head',
    name: 'IP lists, country rule → 403',
    run(ctx) {
      const refused = refusal(ctx.domain, ctx.host, ctx.client, ctx.acme);
      return refused && refuse(parts.metrics, ctx.res, ctx.domain.domain, refused.reason, refused.html);
    },
  };
}
