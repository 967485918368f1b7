// The snapshot's wire format, in one place for the API that writes it and the name server that
// reads (and stores) it: NDJSON, a header line, one line per served zone, an end line with the
// count. A zone line embeds the zone's JSON as it is, so either side can pass it on unparsed.
import type { EdgeNode } from '../model/node.ts';

export interface SnapshotHeader {
  revision: number;
  nodesRevision: number;
  nodes: EdgeNode[];
}

export type SnapshotLine = { kind: 'header'; header: SnapshotHeader } | { kind: 'zone'; json: string } | { kind: 'end'; zones: number };

const ZONE_PREFIX = '{"zone":';

export const headerLine = (header: SnapshotHeader): string =>
  `${JSON.stringify({ snapshot: { revision: header.revision, nodes_revision: header.nodesRevision, nodes: header.nodes } })}\n`;

/** `json` is a zone document's JSON text. */
export const zoneLine = (json: string): string => `${ZONE_PREFIX}${json}}\n`;

export const endLine = (zones: number): string => `${JSON.stringify({ end: { zones } })}\n`;

/** The zone's JSON inside a zone line (without parsing it), or undefined for any other line. */
export function zoneJson(line: string): string | undefined {
  return line.startsWith(ZONE_PREFIX) && line.endsWith('}') ? line.slice(ZONE_PREFIX.length, -1) : undefined;
}

/** Reads one line (without its newline); throws on anything that is not one of the three kinds. */
export function parseSnapshotLine(line: string): SnapshotLine {
  const json = zoneJson(line);
  if (json !== undefined) return { kind: 'zone', json };
  const value = JSON.parse(line) as { snapshot?: { revision?: unknown; nodes_revision?: unknown; nodes?: unknown }; end?: { zones?: unknown } };
  const { snapshot, end } = value;
  if (snapshot && typeof snapshot.revision === 'number' && typeof snapshot.nodes_revision === 'number' && Array.isArray(snapshot.nodes)) {
    return { kind: 'header', header: { revision: snapshot.revision, nodesRevision: snapshot.nodes_revision, nodes: snapshot.nodes as EdgeNode[] } };
  }
  if (end && typeof end.zones === 'number') return { kind: 'end', zones: end.zones };
  throw new Error(`snapshot: unexpected line ${line.slice(0, 80)}`);
}
