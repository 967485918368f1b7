// `bwlimit` (bandwidth.ts): the domain's shared bucket paces what is written to the client — the
// backend's body (through the proxy) and a cache hit's alike.
import type { EdgeParts } from '../stage/parts.ts';
import type { ResponseFilter } from '../stage/stage.ts';

export function bandwidthStage(parts: EdgeParts): ResponseFilter {
  return {
    phase: 'response',
    name: "bwlimit: the body paced by the domain's shared bucket",
    sink(ctx) {
      const domain = ctx.domain;
      return domain.bwlimit > 0 ? (target) => parts.bandwidth.throttle(domain.domain, domain.bwlimit, target) : undefined;
    },
  };
}
