// A domain's WAF settings as the edge uses them: its sensitivity level, block or log only, rule
// exclusions, the body inspection bound with what happens past it, and its GraphQL policy. Domains stored before
// these settings existed have none of the fields: the defaults apply. Compiled once per domain
// state object (a change in the feed brings a new object).
import { DOMAIN_DEFAULTS } from '../../model/domain.ts';

export type WafMode = 'block' | 'log';
/** Past the body limit: refuse (413), inspect the first `limit` bytes and pass the rest, or auto (see below). */
export type BodyOverflow = 'auto' | 'refuse' | 'prefix';
/** GraphQL introspection and alias or batch floods: `block` refuses them (graphql.ts), `off` leaves them be. */
export type GraphqlPolicy = 'off' | 'block';

export interface WafExclusion {
  rule: number;
  /** Only for requests whose path starts with this. */
  path?: string;
  /** Only for this query, form, JSON or cookie parameter. */
  param?: string;
}

/** The fields a domain carries (all optional: older domains have none). */
export interface WafDomainFields {
  waf_level?: number;
  waf_mode?: WafMode;
  waf_exclusions?: WafExclusion[];
  waf_body_limit?: number;
  waf_body_overflow?: BodyOverflow;
  waf_graphql?: GraphqlPolicy;
}

/**
 * The defaults are the model's (level 1: fewest false positives, CRS's paranoia level 1 in
 * spirit; 2 adds looser shapes, single words as base64 and quoted code; 3 and 4 stricter still;
 * 1024 KiB of body inspected).
 */
export const WAF_DEFAULTS = {
  waf_level: DOMAIN_DEFAULTS.waf_level,
  waf_mode: DOMAIN_DEFAULTS.waf_mode as WafMode,
  waf_body_limit: DOMAIN_DEFAULTS.waf_body_limit,
  waf_body_overflow: DOMAIN_DEFAULTS.waf_body_overflow as BodyOverflow,
  waf_graphql: DOMAIN_DEFAULTS.waf_graphql as GraphqlPolicy,
};

export interface WafSettings {
  level: number;
  mode: WafMode;
  exclusions: readonly WafExclusion[];
  bodyLimit: number;
  overflow: BodyOverflow;
  graphql: GraphqlPolicy;
  /** What the verdict cache keys on besides the request (level and exclusions change verdicts). */
  key: string;
}

const compiled = new WeakMap<object, WafSettings>();

export function wafSettings(domain: WafDomainFields | undefined): WafSettings {
  if (domain) {
    const known = compiled.get(domain);
    if (known) return known;
  }
  const level = domain?.waf_level ?? WAF_DEFAULTS.waf_level;
  const exclusions = domain?.waf_exclusions ?? [];
  const graphql = domain?.waf_graphql ?? WAF_DEFAULTS.waf_graphql;
  const settings: WafSettings = {
    level,
    mode: domain?.waf_mode ?? WAF_DEFAULTS.waf_mode,
    exclusions,
    bodyLimit: (domain?.waf_body_limit ?? WAF_DEFAULTS.waf_body_limit) * 1024,
    overflow: domain?.waf_body_overflow ?? WAF_DEFAULTS.waf_body_overflow,
    graphql,
    key: `${level}${graphql === 'block' ? 'g' : ''}${exclusions.length === 0 ? '' : `:${JSON.stringify(exclusions)}`}`,
  };
  if (domain) compiled.set(domain, settings);
  return settings;
}

/** Is this rule excluded for this request path and parameter? */
export function excluded(settings: Pick<WafSettings, 'exclusions'>, rule: number, path: string, param: string | undefined): boolean {
  for (const e of settings.exclusions) {
    if (e.rule !== rule) continue;
    if (e.path !== undefined && !path.startsWith(e.path)) continue;
    if (e.param !== undefined && e.param !== param) continue;
    return true;
  }
  return false;
}
