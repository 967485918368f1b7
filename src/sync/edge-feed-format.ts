// The edge's change feed in one place for the API that writes it and the edge that reads it.
// An edge is fed as exactly one node: only the domains bound to that node (`bind_node` empty or
// naming it), their certificates and HTTP-01 challenges in flight, and the IP lists that apply on it. A domain that leaves the
// node (unbound, deleted) is announced by a keyed digest of its name, never the name: an edge
// learns nothing about domains it does not serve, yet drops the ones it had.
//   snapshot: NDJSON lines {"edge":{revision,node}}, then {"domain":…} / {"certificate":…} /
//   {"challenge":…} / {"iplist":…}, last {"end":{"items":N}} (a body without it was cut short).
import { createHmac } from 'node:crypto';
import type { AcmeChallengeState } from '../model/acme-challenge.ts';
import type { CertificateState } from '../model/certificate.ts';
import type { DomainState } from '../model/domain.ts';
import type { IpListState } from '../model/iplist.ts';
import type { EdgeNode } from '../model/node.ts';
import { NOT_EDGE_SETTINGS } from '../model/domain.ts';
import { WITHHELD_FROM_EDGES } from '../model/domain-readers.ts';
import { isRecordChange, type Change } from '../store/types.ts';

export interface EdgeHeader {
  revision: number;
  /** The node this edge serves as (null once the operator removed it). */
  node: EdgeNode | null;
}

export type EdgeItem =
  | { kind: 'domain'; data: DomainState }
  | { kind: 'certificate'; data: CertificateState }
  | { kind: 'challenge'; data: AcmeChallengeState }
  | { kind: 'iplist'; data: IpListState };

/** The kinds an edge holds one of per domain, announced by digest when they leave. */
export type PerDomainKind = 'domain' | 'certificate' | 'challenge';

export type EdgeLine = { kind: 'header'; header: EdgeHeader } | EdgeItem | { kind: 'end'; items: number };

/** One entry of GET /sync/edge/changes. */
export type EdgeChange =
  | { revision: number; kind: PerDomainKind; op: 'put'; key: string; data: DomainState | CertificateState | AcmeChallengeState }
  /** `digest` = nameDigest(consumer secret, name): the edge matches it against the names it holds. */
  | { revision: number; kind: PerDomainKind; op: 'delete'; digest: string }
  /** From a store in the same process (the all-in-one edge stands for every node): the name itself. */
  | { revision: number; kind: PerDomainKind; op: 'delete'; key: string }
  | { revision: number; kind: 'iplist'; op: 'put'; key: string; data: IpListState }
  | { revision: number; kind: 'iplist'; op: 'delete'; key: string }
  | { revision: number; kind: 'node'; op: 'put' | 'delete'; key: string; data?: EdgeNode };

export interface EdgeChangePage {
  since: number;
  revision: number;
  current: number;
  changes: EdgeChange[];
}

export const nameDigest = (secret: string, name: string): string => createHmac('sha256', secret).update(`edge-name:${name}`).digest('base64url');

/**
 * Whether a stored change may concern an edge: not a change of DNS records alone, nor of settings
 * edges do not act on (tags …). Filter with this before keeping a key's last change in a page.
 */
export const concernsEdges = (change: Change): boolean => !isRecordChange(change) && !(change.settings && change.settings.every((s) => NOT_EDGE_SETTINGS.has(s)));

/** A domain as an edge receives it: without what only its readers receive (the DNSSEC signing keys: ../model/domain-readers.ts). */
export function edgeDomain(domain: DomainState): DomainState {
  const fields = domain as unknown as Record<string, unknown>;
  if (!WITHHELD_FROM_EDGES.some((name) => fields[name] !== undefined)) return domain;
  const rest = { ...fields };
  for (const name of WITHHELD_FROM_EDGES) delete rest[name];
  return rest as unknown as DomainState;
}

/** Whether the edge of `node` serves the domain. */
export const boundTo = (domain: DomainState, node: number): boolean => domain.bind_node.length === 0 || domain.bind_node.includes(node);

/** Whether an IP list acts on `node`. */
export const appliesTo = (list: IpListState, node: number): boolean => list.allnodes || list.nodes.includes(node);

export const edgeHeaderLine = (header: EdgeHeader): string => `${JSON.stringify({ edge: header })}\n`;
export const edgeItemLine = (item: EdgeItem): string => `${JSON.stringify({ [item.kind]: item.data })}\n`;
export const edgeEndLine = (items: number): string => `${JSON.stringify({ end: { items } })}\n`;

export function parseEdgeLine(line: string): EdgeLine {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (value.edge && typeof value.edge === 'object') {
    const header = value.edge as EdgeHeader;
    if (typeof header.revision === 'number') return { kind: 'header', header };
  }
  if (value.domain && typeof value.domain === 'object' && typeof (value.domain as DomainState).domain === 'string') return { kind: 'domain', data: value.domain as DomainState };
  if (value.certificate && typeof value.certificate === 'object' && typeof (value.certificate as CertificateState).domain === 'string') {
    return { kind: 'certificate', data: value.certificate as CertificateState };
  }
  if (value.challenge && typeof value.challenge === 'object' && typeof (value.challenge as AcmeChallengeState).domain === 'string' && Array.isArray((value.challenge as AcmeChallengeState).tokens)) {
    return { kind: 'challenge', data: value.challenge as AcmeChallengeState };
  }
  if (value.iplist && typeof value.iplist === 'object' && typeof (value.iplist as IpListState).id === 'number') return { kind: 'iplist', data: value.iplist as IpListState };
  const end = value.end as { items?: unknown } | undefined;
  if (end && typeof end.items === 'number') return { kind: 'end', items: end.items };
  throw new Error(`edge snapshot: unexpected line ${line.slice(0, 80)}`);
}
