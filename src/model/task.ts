// A certificate task: one per domain at a time, from the moment a certificate is wanted (ssl
// turned on, names changed, renewal due, or asked for) until it is issued or given up. Its state
// and, when it waits or failed, why — per name, in the CA's own words (RFC 8555 problem type and
// detail) — are what the customer reads at GET /tasks/.
import { Type, type Static } from 'typebox';
import { Nullable } from './common.ts';

export type TaskStatus = 'queued' | 'running' | 'done' | 'failed';
export type TaskReason = 'new' | 'names-changed' | 'renewal' | 'requested';
export type ChallengeKind = 'dns-01' | 'http-01';

export interface NameProblem {
  name: string;
  /** An RFC 8555 problem type ("urn:ietf:params:acme:error:dns") or one of ours ("palisade:…"). */
  type: string;
  detail: string;
}

export interface TaskState {
  id: string;
  ownerId: number;
  domain: string;
  /** The names the certificate is to cover. */
  names: string[];
  reason: TaskReason;
  status: TaskStatus;
  /** Chosen at each attempt: DNS-01 when our name servers serve the domain, HTTP-01 otherwise. */
  challenge: ChallengeKind | null;
  attempts: number;
  /** ACME orders placed for this task (one per attempt that got as far as ordering). */
  orders: number;
  /** While queued: not before this (after a failure, or too soon after the last attempt). */
  nextAttempt: string | null;
  /** When the domain's last attempt started (carried over to the domain's next task). */
  lastAttempt: string | null;
  /** Why the last attempt failed (the whole story; `problems` has it per name). */
  error: string | null;
  problems: NameProblem[];
  /** Once done: what was issued. */
  certificate: { fingerprint: string; notBefore: string; notAfter: string } | null;
  created: string;
  updated: string;
}

export const Task = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('certificate'),
    domain: Type.String(),
    names: Type.Array(Type.String()),
    reason: Type.Union([Type.Literal('new'), Type.Literal('names-changed'), Type.Literal('renewal'), Type.Literal('requested')]),
    state: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')], {
      description: 'queued → running → done | failed; a failed attempt goes back to queued with `next_attempt` until the attempts run out',
    }),
    challenge: Type.Union([Type.Literal('dns-01'), Type.Literal('http-01'), Type.Null()]),
    attempts: Type.Integer(),
    orders: Type.Integer({ description: 'ACME orders placed for this task' }),
    next_attempt: Nullable(Type.String({ format: 'date-time', description: 'While queued: not before this' })),
    last_attempt: Nullable(Type.String({ format: 'date-time', description: "When the domain's last attempt started" })),
    error: Nullable(Type.String()),
    problems: Type.Array(Type.Object({ name: Type.String(), type: Type.String(), detail: Type.String() }), {
      description: "Per name: the CA's problem type and detail, or ours (type palisade:…) when the check before ordering failed",
    }),
    certificate: Type.Union([Type.Object({ fingerprint: Type.String(), not_before: Type.String(), not_after: Type.String() }), Type.Null()]),
    created: Type.String({ format: 'date-time' }),
    updated: Type.String({ format: 'date-time' }),
  },
  {
    examples: [
      {
        id: 'tk_3q2b7xk1mzq0',
        type: 'certificate',
        domain: 'example.org',
        names: ['example.org', 'www.example.org'],
        reason: 'new',
        state: 'queued',
        challenge: 'http-01',
        attempts: 1,
        orders: 1,
        next_attempt: '2026-11-23T09:02:00.000Z',
        last_attempt: '2026-11-23T09:01:00.000Z',
        error: 'www.example.org: the CA could not fetch the token',
        problems: [{ name: 'www.example.org', type: 'urn:ietf:params:acme:error:connection', detail: 'Connection refused' }],
        certificate: null,
        created: '2026-11-23T09:00:00.000Z',
        updated: '2026-11-23T09:01:00.000Z',
      },
    ],
  },
);
export type Task = Static<typeof Task>;

export function renderTask(t: TaskState): Task {
  return {
    id: t.id,
    type: 'certificate',
    domain: t.domain,
    names: t.names,
    reason: t.reason,
    state: t.status,
    challenge: t.challenge,
    attempts: t.attempts,
    orders: t.orders,
    next_attempt: t.nextAttempt,
    last_attempt: t.lastAttempt ?? null,
    error: t.error,
    problems: t.problems,
    certificate: t.certificate && { fingerprint: t.certificate.fingerprint, not_before: t.certificate.notBefore, not_after: t.certificate.notAfter },
    created: t.created,
    updated: t.updated,
  };
}

export const isActive = (t: TaskState): boolean => t.status === 'queued' || t.status === 'running';

/** How a task ended because nothing is wanted any more (ssl off): closed, not the customer's to mend. */
export const CANCELLED = 'cancelled: ';

/**
 * What `GET /tasks/` shows by default: the active tasks and those that failed for a reason the
 * customer has to act on (no CA, a name that does not resolve, a claim not proven). Without the
 * failed ones, a certificate that can never be issued showed as an empty list.
 */
export const isOpen = (t: TaskState): boolean => isActive(t) || (t.status === 'failed' && !(t.error ?? '').startsWith(CANCELLED));

export type TaskFilter = 'open' | 'active' | 'all';

export function taskShown(t: TaskState, filter: TaskFilter): boolean {
  return filter === 'all' || (filter === 'open' ? isOpen(t) : isActive(t));
}
