// Reading one zone back from a stored state, shared by the name server's own local state
// (local-state.ts) and the read-only view its DNS workers pin (stored-zones.ts): the zone's line
// in the snapshot's bytes, and the record changes stored over it.
import type { Database, Transaction } from 'lmdb';
import type { RecordState } from '../model/record.ts';
import type { Zone } from '../store/types.ts';
import { LineSplitter, type Line } from '../common/ndjson.ts';
import type { RecordKey, SideDbs, StoredHead } from './local-state-layout.ts';
import { zoneJson } from './snapshot-format.ts';

/**
 * The zone whose line starts at `offset` in a snapshot's bytes: the chunk holding that byte
 * (`chunkStarts`: each chunk's first byte, increasing), then chunks until its newline. A chunk
 * read may reuse the previous one's buffer: only the line's bytes are kept.
 */
export function zoneAt(offset: number, chunkStarts: readonly number[], chunk: (i: number) => Buffer | undefined): Zone | undefined {
  let low = 0;
  let high = chunkStarts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (chunkStarts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  const parts: Buffer[] = [];
  for (let i = low; i < chunkStarts.length; i++) {
    const bytes = chunk(i);
    if (!bytes) break;
    const from = parts.length === 0 ? offset - chunkStarts[i]! : 0;
    const newline = bytes.indexOf(10, from);
    // Copied: `chunk` may hand out a buffer it reuses for the next read.
    parts.push(Buffer.from(bytes.subarray(from, newline === -1 ? bytes.length : newline)));
    if (newline !== -1) break;
  }
  const json = zoneJson(Buffer.concat(parts).toString('utf8'));
  return json === undefined ? undefined : (JSON.parse(json) as Zone);
}

/** A zone's records with the changes stored over them on top (by id; '' removes). */
export function withStoredChanges(records: Database<string, RecordKey>, zone: Zone, transaction?: Transaction): Zone {
  const name = zone.domain.domain;
  const byId = new Map(zone.records.map((r) => [r.id, r]));
  for (const { key, value } of records.getRange({ start: [name, 0], end: [name, Number.MAX_SAFE_INTEGER], transaction })) {
    if (value === '') byId.delete(key[1]);
    else byId.set(key[1], JSON.parse(value) as RecordState);
  }
  return { domain: zone.domain, records: [...byId.values()] };
}

/** Every zone of a snapshot held as its chunks. */
export function* snapshotZones(chunks: Iterable<Buffer>): Generator<Zone> {
  const splitter = new LineSplitter();
  const zonesOf = (lines: Line[]) =>
    lines.flatMap((line) => {
      const json = zoneJson(line.text);
      return json === undefined ? [] : [JSON.parse(json) as Zone];
    });
  for (const chunk of chunks) yield* zonesOf(splitter.push(chunk));
  yield* zonesOf(splitter.end());
}

/**
 * Every zone a side keeps, as served: the snapshot's (its changes on top, those removed skipped),
 * then the zones that came whole since. Notes in `found` where each zone's line and each chunk
 * starts (to read one zone back later).
 */
export function* sideZones(side: SideDbs, found: { offsets: Map<string, number>; chunkStarts: number[] }, transaction?: Transaction): Generator<Zone> {
  const changed = new Map<string, StoredHead | undefined>();
  for (const { key, value } of side.heads.getRange({ transaction })) changed.set(key, value === '' ? undefined : (JSON.parse(value) as StoredHead));
  const splitter = new LineSplitter();
  const done = new Set<string>();
  const changes = (zone: Zone) => withStoredChanges(side.records, zone, transaction);
  const zonesOf = function* (lines: Line[]): Generator<Zone> {
    for (const line of lines) {
      const json = zoneJson(line.text);
      if (json === undefined) continue;
      const zone = JSON.parse(json) as Zone;
      const name = zone.domain.domain;
      found.offsets.set(name, line.offset);
      if (!changed.has(name)) {
        yield zone;
        continue;
      }
      const head = changed.get(name);
      done.add(name);
      if (head) yield changes(head.own ? { domain: head.domain, records: [] } : { domain: head.domain, records: zone.records });
    }
  };
  for (const { key, value } of side.snapshot.getRange({ transaction })) {
    found.chunkStarts.push(key);
    yield* zonesOf(splitter.push(value));
  }
  yield* zonesOf(splitter.end());
  for (const [name, head] of changed) if (head && !done.has(name)) yield changes({ domain: head.domain, records: [] });
}
