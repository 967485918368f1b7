// A DNS stage, in the manner of a CoreDNS plugin: it gets the query's context and the rest of the
// chain (`next`); it may act before calling it (read the question, answer at once and not call
// it), after (change or drop the response), or both. Every stage says what it does on each of the
// two paths a query can take — the cached path (the packet read just enough for a cache key) and
// the full path (parsed, answered by the engine) — null where it does nothing, so a new stage
// cannot forget one of them.
import type { QueryContext } from './context.ts';

export type Next = (ctx: QueryContext) => void;
export type Hook = (ctx: QueryContext, next: Next) => void;

export interface DnsStage {
  readonly name: string;
  readonly cached: Hook | null;
  readonly full: Hook | null;
  /** Its cached hook can answer (sets ctx.answered): without such a stage the cached path is not run. */
  readonly answersCached?: boolean;
}

const END: Next = () => undefined;

/** The hooks of one path as one function, outermost first; stages with none are passed over. */
export function compose(hooks: ReadonlyArray<Hook | null>): Next {
  let next = END;
  for (let i = hooks.length - 1; i >= 0; i--) {
    const hook = hooks[i];
    if (!hook) continue;
    const inner = next;
    next = (ctx) => hook(ctx, inner);
  }
  return next;
}
