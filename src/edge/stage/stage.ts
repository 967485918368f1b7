// The stage contract: every entry of the chain (../chain.ts) joins one phase, in Pingora's order —
// connection → request head → body → upstream → response → logging — and has the shape of that
// phase. A stage that answers returns its outcome; one that passes the request on returns undefined.
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { BodyTap } from '../proxy.ts';
import type { RequestContext, StageResult } from './context.ts';

export const PHASES = ['connection', 'request head', 'body', 'upstream', 'response', 'logging'] as const;
export type Phase = (typeof PHASES)[number];

/** A connection as it is accepted: false closes it at once (before any byte is read). */
export interface ConnectionStage {
  phase: 'connection';
  name: string;
  accept(socket: Socket): boolean;
}

/** A stage of the walk: answers the request (its outcome) or passes it on (undefined). */
export interface WalkStage {
  phase: 'request head' | 'body' | 'upstream' | 'response';
  name: string;
  run(ctx: RequestContext): StageResult;
}

/**
 * A watch armed when the request starts, whichever stage holds it then (a body's deadline runs
 * from its first byte); returns what disarms it when the response is over.
 */
export interface BodyWatchStage {
  phase: 'body';
  name: string;
  watch(ctx: RequestContext): () => void;
}

/** Joins the backend's response as it streams (called by the proxy, not in the walk). */
export interface ResponseFilter {
  phase: 'response';
  name: string;
  /** The backend's head: headers changed in place; a tap sees the body (the cache fill). */
  head?(ctx: RequestContext, status: number, headers: Record<string, string | string[]>): BodyTap | undefined;
  /** Where the body is written instead of the response (the bandwidth limit). */
  sink?(ctx: RequestContext): ((res: ServerResponse) => Writable) | undefined;
}

/** Sees the request once answered (`answered`) and once its response is over (`ended`). */
export interface LoggingStage {
  phase: 'logging';
  name: string;
  answered?(ctx: RequestContext): void;
  ended?(ctx: RequestContext): void;
}

export type ChainEntry = ConnectionStage | WalkStage | BodyWatchStage | ResponseFilter | LoggingStage;

export function isWalkStage(entry: ChainEntry): entry is WalkStage {
  return 'run' in entry;
}
