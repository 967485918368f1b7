// A streamed snapshot gathered into one object, for in-process consumers that want it whole.
import type { Snapshot, SnapshotChunk, Zone } from './types.ts';

export async function collectSnapshot(chunks: AsyncIterable<SnapshotChunk>): Promise<Snapshot> {
  let snapshot: Snapshot | undefined;
  for await (const chunk of chunks) {
    if (chunk.kind === 'header') snapshot = { revision: chunk.revision, nodesRevision: chunk.nodesRevision, nodes: chunk.nodes, zones: [] };
    else if (snapshot) for (const json of chunk.json) snapshot.zones.push(JSON.parse(json) as Zone);
    else throw new Error('snapshot: zones arrived before the header');
  }
  if (!snapshot) throw new Error('snapshot: the store sent no header');
  return snapshot;
}
