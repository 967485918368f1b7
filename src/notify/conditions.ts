// Conditions of a domain the customer is told of when they begin and when they end. Pure.
import type { DomainState } from '../model/domain.ts';
import type { EdgeNode } from '../model/node.ts';
import type { EventType } from '../model/event.ts';

export type ConditionKind = 'unserved' | 'delegation' | 'expiring';

/** The events a condition's start and end raise. */
export const CONDITION_EVENTS: Record<ConditionKind, { start: EventType; end: EventType | null }> = {
  unserved: { start: 'domain.unserved', end: 'domain.served' },
  delegation: { start: 'delegation.missing', end: 'delegation.ok' },
  expiring: { start: 'certificate.expiring', end: null },
};

/** Protection on, and no active edge node serves it: its protected names resolve to nothing. */
export function isUnserved(domain: DomainState, nodes: readonly EdgeNode[]): boolean {
  if (!domain.enabled) return false;
  const bound = new Set(domain.bind_node);
  return !nodes.some((n) => n.status === 'active' && (bound.size === 0 || bound.has(n.id)));
}

/**
 * Whether the NS set a resolver sees for the domain delegates to ours: at least one of our
 * name servers named (a customer may add their own beside ours). Names compared without case
 * and final dot.
 */
export function delegatesToUs(seen: readonly string[], ours: readonly string[]): boolean {
  const canonical = (n: string) => n.toLowerCase().replace(/\.$/, '');
  const set = new Set(seen.map(canonical));
  return ours.some((n) => set.has(canonical(n)));
}

/** A certificate whose end is nearer than `withinMs` (and no renewal has replaced it yet). */
export const isExpiring = (notAfter: string, now: number, withinMs: number): boolean => Date.parse(notAfter) - now < withinMs;
