// Runs the chain (../chain.ts) for the fronts: the connection stages on accept, the watches when a
// request starts, the walk through the request-head, body, upstream and response stages, the
// response filters for the proxy, and the logging stages once answered and once over.
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { BodyTap } from '../proxy.ts';
import { PAGES } from '../pages.ts';
import { page } from './answer.ts';
import type { Outcome, RequestContext, ResponseFilters } from './context.ts';
import { PHASES, isWalkStage, type BodyWatchStage, type ChainEntry, type ConnectionStage, type LoggingStage, type ResponseFilter, type WalkStage } from './stage.ts';

export class ChainRunner implements ResponseFilters {
  private readonly connection: ConnectionStage[] = [];
  private readonly walkStages: WalkStage[] = [];
  private readonly watches: BodyWatchStage[] = [];
  private readonly heads: ResponseFilter[] = [];
  private readonly sinks: ResponseFilter[] = [];
  private readonly logging: LoggingStage[] = [];

  constructor(
    readonly entries: readonly ChainEntry[],
    private readonly log: Logger,
  ) {
    checkOrder(entries);
    for (const entry of entries) {
      if (entry.phase === 'connection') this.connection.push(entry);
      else if (entry.phase === 'logging') this.logging.push(entry);
      else if (isWalkStage(entry)) this.walkStages.push(entry);
      else if ('watch' in entry) this.watches.push(entry);
      else {
        if (entry.head) this.heads.push(entry);
        if (entry.sink) this.sinks.push(entry);
      }
    }
  }

  /** A connection as it is accepted: false when a connection stage closed it. */
  accept(socket: Socket): boolean {
    for (const stage of this.connection) if (!stage.accept(socket)) return false;
    return true;
  }

  /** Arms the request's watches; returns what disarms them. */
  arm(ctx: RequestContext): () => void {
    if (this.watches.length === 1) return this.watches[0]!.watch(ctx);
    const stops = this.watches.map((stage) => stage.watch(ctx));
    return () => {
      for (const stop of stops) stop();
    };
  }

  /**
   * Walks the stages and hands the outcome to the logging stages: synchronous as long as the
   * stages are (a fresh hit of a domain without baseprotection never waits), and from the first
   * that waits on, one promise per wait. A stage that throws gets the request a 502.
   */
  run(ctx: RequestContext): void {
    let walked: Outcome | Promise<Outcome>;
    try {
      walked = this.walk(ctx, 0);
    } catch (error) {
      walked = this.failed(ctx, error);
    }
    // A request answered at once is finished at once; one that waited, when it is answered.
    if (walked instanceof Promise) walked.then((outcome) => this.answered(ctx, outcome), (error: unknown) => this.answered(ctx, this.failed(ctx, error)));
    else this.answered(ctx, walked);
  }

  /** A front answered the request itself (one its protocol cannot carry): logged as any other. */
  answeredByFront(ctx: RequestContext, outcome: Outcome): void {
    this.answered(ctx, outcome);
  }

  /** The response is over (or the client gone): the log line, once the outcome is known too. */
  ended(ctx: RequestContext): void {
    ctx.over = true;
    this.settle(ctx);
  }

  head(ctx: RequestContext, status: number, headers: Record<string, string | string[]>): BodyTap | undefined {
    let tap: BodyTap | undefined;
    for (const filter of this.heads) tap = filter.head!(ctx, status, headers) ?? tap;
    return tap;
  }

  sink(ctx: RequestContext): ((res: ServerResponse) => Writable) | undefined {
    for (const filter of this.sinks) {
      const sink = filter.sink!(ctx);
      if (sink) return sink;
    }
    return undefined;
  }

  private walk(ctx: RequestContext, from: number): Outcome | Promise<Outcome> {
    const stages = this.walkStages;
    for (let i = from; i < stages.length; i++) {
      const outcome = stages[i]!.run(ctx);
      if (outcome instanceof Promise) return outcome.then((answered) => answered ?? this.walk(ctx, i + 1));
      if (outcome) return outcome;
    }
    throw new Error('edge: no stage answered the request');
  }

  private failed(ctx: RequestContext, error: unknown): Outcome {
    this.log.error({ err: error, host: ctx.host || undefined }, 'edge: request failed');
    if (!ctx.res.headersSent) page(ctx.res, 502, PAGES.badGateway(ctx.host));
    else ctx.res.destroy();
    return { status: 502 };
  }

  private answered(ctx: RequestContext, outcome: Outcome): void {
    ctx.outcome = outcome;
    for (const stage of this.logging) stage.answered?.(ctx);
    this.settle(ctx);
  }

  private settle(ctx: RequestContext): void {
    if (!ctx.over || !ctx.outcome || ctx.logged) return;
    ctx.logged = true;
    for (const stage of this.logging) stage.ended?.(ctx);
  }
}

/** The phases in Pingora's order: an entry listed before one of an earlier phase is a mistake in chain.ts. */
function checkOrder(entries: readonly ChainEntry[]): void {
  let last = 0;
  for (const entry of entries) {
    const at = PHASES.indexOf(entry.phase);
    if (at < last) throw new Error(`edge chain: "${entry.name}" (${entry.phase}) is listed after a stage of the ${PHASES[last]} phase`);
    last = at;
  }
}
