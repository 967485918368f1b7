// The runner of the query chain (../query-chain.ts): one packet in, one response out (or nothing,
// for packets we never answer). It makes the query's context, reads the packet just enough for a
// cache key, runs the stages' cached path and, when that did not answer, their full path. Every
// exception is caught here: a packet can cost us a SERVFAIL, never the process.
import { QueryContext, type ChainRunner, type ClientAddress, type MessageStream, type Transport } from '../chain/context.ts';
import { fastKey } from '../chain/fast-key.ts';
import { compose, type DnsStage, type Next } from '../chain/stage.ts';
import type { DnsMetrics } from '../metrics/dns-metrics.ts';
import { queryChain, type ChainSettings } from '../query-chain.ts';
import { RCODE } from '../wire/constants.ts';
import type { ZoneIndex } from '../zone/index.ts';

export type { ClientAddress, Transport };

export interface HandlerOptions extends ChainSettings {
  /** Told of internal errors (the query itself was answered SERVFAIL). */
  onError?: (error: unknown) => void;
  /** Changes the chain before it is composed (tests add a stage to see what it sees). */
  rewrite?: (stages: DnsStage[]) => DnsStage[];
}

export class QueryHandler implements ChainRunner {
  /** The stages' names, outermost first. */
  readonly stages: readonly string[];
  private readonly cachedPath: Next | undefined;
  private readonly fullPath: Next;

  constructor(
    index: ZoneIndex,
    private readonly metrics: DnsMetrics,
    private readonly options: HandlerOptions = {},
  ) {
    const standard = queryChain(index, metrics, options);
    const stages = options.rewrite ? options.rewrite(standard) : standard;
    this.stages = stages.map((s) => s.name);
    // Without a stage that can answer there (the cache), the packet goes straight to the full path.
    this.cachedPath = stages.some((s) => s.answersCached) ? compose(stages.map((s) => s.cached)) : undefined;
    this.fullPath = compose(stages.map((s) => s.full));
  }

  /** The response bytes for a query packet, or undefined to send nothing (UDP: a transfer's first message only). */
  handle(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | undefined {
    return this.run(packet, transport, client, true).response;
  }

  /** Like handle(), but a zone transfer's several messages too (TCP): a stream, made a message at a time. */
  handleAll(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | Buffer[] | MessageStream | undefined {
    const ctx = this.run(packet, transport, client, true);
    return ctx.messages ?? ctx.response;
  }

  /** A transfer's inner question (a signed SOA query), through the chain without its transfer stage. */
  answerInner(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | undefined {
    return this.run(packet, transport, client, false).response;
  }

  private run(packet: Buffer, transport: Transport, client: ClientAddress, transfers: boolean): QueryContext {
    const ctx = new QueryContext(packet, transport, client, transfers, this);
    try {
      if (this.cachedPath) {
        ctx.fast = fastKey(packet);
        if (ctx.fast) {
          this.cachedPath(ctx);
          if (ctx.answered) return ctx;
        }
      }
      this.fullPath(ctx);
    } catch (error) {
      this.metrics.internalErrors++;
      if (ctx.messages && !Array.isArray(ctx.messages)) ctx.messages.close();
      ctx.messages = undefined;
      ctx.response = servfail(packet);
      if (ctx.response) this.metrics.observe(ctx.response, performance.now() - ctx.started, transport);
      this.options.onError?.(error);
    }
    return ctx;
  }
}

/** A SERVFAIL for a packet whose handling failed, echoing what can be echoed safely. */
function servfail(packet: Buffer): Buffer | undefined {
  if (packet.length < 12 || packet[2]! & 0x80) return undefined;
  const out = Buffer.alloc(12);
  packet.copy(out, 0, 0, 2);
  out[2] = 0x80 | (packet[2]! & 0x01);
  out[3] = RCODE.SERVFAIL;
  return out;
}
