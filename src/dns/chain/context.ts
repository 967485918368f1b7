// The one object a query's stages share: what arrived, what each stage learnt on the way in, and
// what goes back. Made per query by the runner (../server/handler.ts) and dropped after it, so no
// stage leaves per-query state on anything shared.
import { parseQuery, type ParseResult } from '../wire/query.ts';
import type { ResponseSpec } from '../wire/response.ts';
import type { ZoneData } from '../zone/types.ts';
import type { FastQuery } from './fast-key.ts';

export type Transport = 'udp' | 'tcp';

/**
 * A reply of many messages made one at a time (a zone transfer, ../transfer/stream.ts): the TCP
 * listener starts it (it may wait for its turn), takes its messages in its slices, and closes it.
 */
export interface MessageStream {
  start(ready: () => void): void;
  next(): Buffer | undefined;
  close(): void;
}

export interface ClientAddress {
  address: string;
}

/** The COOKIE option's data for the response, and whether the query carried a valid server cookie of ours. */
export interface CookieReply {
  data: Buffer;
  valid: boolean;
}

/** The engine's answer before encoding (what a signing stage would add to, and the cache keeps). */
export type AnswerSpec = ResponseSpec & {
  /** Shared by every asker (no location used). */
  cacheable: boolean;
  /** The zones the answer was read from (a cached copy is stale once one is replaced). */
  zones: readonly ZoneData[];
  /** For answers chosen by the client's place: the location part of their cache key. */
  place: string | undefined;
  /** Signed answers: when their signatures' window ends (ms); no cache serves them past it. */
  expires?: number;
};

/** What runs the chain (../server/handler.ts), as a context needs it. */
export interface ChainRunner {
  answerInner(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | undefined;
}

export class QueryContext {
  readonly started = performance.now();
  /** The cached path's reading of the packet (set by the runner); undefined on the full path of an unusual packet. */
  fast: FastQuery | undefined = undefined;
  /** Set by the cookie stage: our cookie for the response (computed once per query). */
  cookie: CookieReply | undefined = undefined;
  /** The answer as the engine made it (full path). */
  spec: AnswerSpec | undefined = undefined;
  /** The encoded answer, and its TC=1 form when over 512 octets (full path). */
  encoded: { full: Buffer; truncated: Buffer | undefined } | undefined = undefined;
  /** The response to send; undefined sends nothing. */
  response: Buffer | undefined = undefined;
  /** A zone transfer's messages: all made (the first is also `response`), or made as TCP sends them. */
  messages: Buffer[] | MessageStream | undefined = undefined;
  /** The cached path answered: the full path does not run. */
  answered = false;
  /** The query type, when a stage knows it without reading the response again (metrics). */
  qtype: number | undefined = undefined;
  private parsedQuery: ParseResult | undefined = undefined;

  constructor(
    readonly packet: Buffer,
    readonly transport: Transport,
    readonly client: ClientAddress,
    /** Whether the transfer stage may take the packet (not for a transfer's own inner questions). */
    readonly transfers: boolean,
    private readonly runner: ChainRunner,
  ) {}

  /** Another query from the same client answered through the chain, transfers excluded (a transfer's inner question). */
  ask(packet: Buffer): Buffer | undefined {
    return this.runner.answerInner(packet, this.transport, this.client);
  }

  /** The full parse of the packet, made on first use. */
  get parsed(): ParseResult {
    return (this.parsedQuery ??= parseQuery(this.packet));
  }
}

/** The largest DNS message over TCP (a 16-bit length prefix). */
export const TCP_LIMIT = 65_535;

/** Suffix of a cache key for one client location (an answer's `place`). */
export function locationKey(country: number | undefined, continent: number | undefined): string {
  return `\u0000${country ?? ''},${continent ?? ''}`;
}
