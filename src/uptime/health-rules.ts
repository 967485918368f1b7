// How the edges' verdicts on a domain's backend become its state, and what the customer is told.
// Pure: the store keeps one document per domain and applies these rules in one atomic step.
//
// - Each node's latest verdict is kept; the domain's state is the majority of the nodes heard
//   from lately (a node silent for NODE_SILENT_MS is left out, unless none is heard): at least
//   half of them seeing the backend down makes it down (or on failover, when most of those see
//   the failover up). One edge's bad route does not page a customer; a real outage seen by half
//   the edges does.
// - The customer is told of each change of state — unless the state changed more than
//   FLAP_LIMIT times within FLAP_WINDOW_MS: then once that it flaps, and nothing more until it
//   has held still for STABLE_MS, when the state it settled in is told (if it differs).
import type { DomainHealth } from './report.ts';

export const NODE_SILENT_MS = 5 * 60_000;
export const FLAP_WINDOW_MS = 15 * 60_000;
export const FLAP_LIMIT = 6;
export const STABLE_MS = 5 * 60_000;

export interface HealthDoc {
  domain: string;
  owner: number;
  /** Each node's verdict, and when it last changed. */
  nodes: Record<string, { state: DomainHealth; since: number }>;
  state: DomainHealth;
  since: number;
  /** What the customer was last told (events follow this, not every change). */
  notified: DomainHealth;
  /** When the state changed, within the flap window. */
  changes: number[];
  flapping: boolean;
}

export type HealthEventType = 'backend.down' | 'backend.recovered' | 'failover.engaged' | 'failover.released' | 'backend.flapping';

/** The domain's state from its nodes' verdicts; `live(node)` says whether a node was heard from lately. */
export function stateOf(nodes: HealthDoc['nodes'], live: (node: number) => boolean): DomainHealth {
  let entries = Object.entries(nodes).filter(([node]) => live(Number(node)));
  if (entries.length === 0) entries = Object.entries(nodes);
  if (entries.length === 0) return 'up';
  const notUp = entries.filter(([, v]) => v.state !== 'up');
  if (notUp.length * 2 < entries.length) return 'up';
  const onFailover = notUp.filter(([, v]) => v.state === 'failover').length;
  return onFailover * 2 > notUp.length ? 'failover' : 'down';
}

/** Records a node's verdict; undefined when it changes nothing. */
export function withVerdict(doc: HealthDoc | undefined, base: { domain: string; owner: number }, node: number, verdict: DomainHealth, now: number, live: (node: number) => boolean): HealthDoc | undefined {
  const current: HealthDoc = doc ?? { ...base, nodes: {}, state: 'up', since: now, notified: 'up', changes: [], flapping: false };
  if (current.nodes[node]?.state === verdict) return undefined;
  const nodes = { ...current.nodes, [node]: { state: verdict, since: now } };
  const updated = { ...current, owner: base.owner, nodes };
  return settle(updated, now, live) ?? updated;
}

/**
 * Re-derives the state (nodes may have fallen silent) and what is told; undefined when nothing
 * changes. Also what a periodic look calls, so that a flapping domain is told once it settles.
 */
export function settle(doc: HealthDoc, now: number, live: (node: number) => boolean): HealthDoc | undefined {
  const state = stateOf(doc.nodes, live);
  let { since, flapping, notified } = doc;
  let changes = doc.changes.filter((t) => now - t < FLAP_WINDOW_MS);
  if (state !== doc.state) {
    since = now;
    changes = [...changes, now];
  }
  if (!flapping && changes.length > FLAP_LIMIT) flapping = true;
  else if (flapping && now - since >= STABLE_MS) flapping = false;
  if (!flapping) notified = state;
  const next: HealthDoc = { ...doc, state, since, flapping, notified, changes };
  const same = state === doc.state && flapping === doc.flapping && notified === doc.notified && changes.length === doc.changes.length;
  return same ? undefined : next;
}

/** The events a document's change calls for (from `before`, or a domain never heard of). */
export function healthEvents(before: HealthDoc | undefined, after: HealthDoc): HealthEventType[] {
  const events: HealthEventType[] = [];
  if (after.flapping && !before?.flapping) events.push('backend.flapping');
  const from = before?.notified ?? 'up';
  const to = after.notified;
  if (from === to) return events;
  if (from === 'up') events.push('backend.down');
  if (from === 'failover') events.push('failover.released');
  if (to === 'failover') events.push('failover.engaged');
  if (to === 'up') events.push('backend.recovered');
  return events;
}

/**
 * Whether a DNS-only domain's names should answer with the failover: while it is on failover,
 * and also while its state flaps (unless both are down), so that resolvers are not switched back
 * and forth with each flap — the failover holds until the backend has been steady for STABLE_MS.
 */
export const failoverWanted = (doc: HealthDoc): boolean => doc.state === 'failover' || (doc.flapping && doc.state !== 'down');
