// What a Redis store mutation hands to the commit script: the documents it read (checks), the
// writes it makes (ops), its change entry, and the rules the script re-checks atomically.
import { randomBytes } from 'node:crypto';
import { StoreError } from '../errors.ts';
import type { ChangeKind } from '../types.ts';

export type Op =
  | { op: 'set'; key: string; v: string }
  /** Values that may carry a customer's text: passed as arguments, never inside the plan. */
  | { op: 'hsetv'; key: string; f: string; v: string }
  | { op: 'zaddv' | 'zremv'; key: string; v: string }
  /** A document whose revision the script fills in: parts[0] + revision + parts[1]. */
  | { op: 'setrev'; key: string; parts: [string, string] }
  | { op: 'del'; key: string }
  | { op: 'zadd' | 'zrem'; key: string; v: string; s?: number }
  | { op: 'hset'; key: string; f: string; v: string }
  | { op: 'hdel'; key: string; f: string }
  | { op: 'rename' | 'swap'; key: string; to: string };

export interface Plan<T> {
  /** Documents read before computing, with the values they had (null = absent). */
  checks: Array<[string, string | null]>;
  ops: Op[];
  /** `settings`: our own field names (never a customer's text), so kept in the plan itself. */
  change: { kind: ChangeKind; key: string; op: 'put' | 'delete'; settings?: string[] };
  /** The change's detail (a record delta) as JSON text: stored beside the entry as given. */
  detail?: string;
  limit?: { key: string; max: number; error: StoreError };
  /** A new domain: refused when it lies at, under or above another owner's domain. */
  overlap?: { name: string; owner: number };
  /** The result, given the committed revision. */
  result: (revision: number) => T;
}

export type Attempt<T> = Plan<T> | { unchanged: T };

/**
 * A document as two texts around its revision, for the script to join with the revision it takes.
 * The split is made by structure: the revision is set to a random marker that is checked to occur
 * exactly once in the serialised document, so no stored text is ever searched or rewritten.
 */
export function withRevision<T extends object>(key: string, doc: T, path: (d: T) => { revision: number }): Op {
  const copy = structuredClone(doc);
  for (;;) {
    const marker = `\u0000rev${randomBytes(12).toString('hex')}`;
    (path(copy) as { revision: unknown }).revision = marker;
    const text = JSON.stringify(copy);
    const quoted = JSON.stringify(marker);
    const at = text.indexOf(quoted);
    if (at !== -1 && text.indexOf(quoted, at + 1) === -1) return { op: 'setrev', key, parts: [text.slice(0, at), text.slice(at + quoted.length)] };
  }
}
