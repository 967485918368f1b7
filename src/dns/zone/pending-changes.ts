// What the zone index (index.ts) keeps of a change it cannot apply yet, and the small steps it
// takes over record differences: a zone with differences applied over it, and the names a
// difference may rebuild, as they were (for the IXFR journal).
import type { DomainState } from '../../model/domain.ts';
import { afterRecords } from '../../model/domain.ts';
import { absoluteName } from '../../model/names.ts';
import type { RecordState } from '../../model/record.ts';
import type { RecordDelta, Zone } from '../../store/types.ts';
import { protectedOwners } from './build.ts';
import type { ZoneSource } from './index.ts';
import type { NameNode, ZoneData } from './types.ts';

/** One deferred settings change: the latest settings, and where the records come from. */
export interface Deferred {
  domain: DomainState;
  /** A zone not served: its records by id, when the index kept them (it stopped serving it while this waited). */
  held?: { domain: DomainState; records: Map<number, RecordState> };
  /**
   * Else the feeder, read when the zone is built (not before: deferring costs nothing), with the
   * differences that came meanwhile applied over what it gives (by id: harmless if it has them).
   */
  source: ZoneSource;
  deltas: Array<{ delta: RecordDelta; revision: number }>;
}

export function namesBefore(zone: ZoneData, delta: RecordDelta): Map<string, NameNode | undefined> {
  const names = new Set<string>([zone.apex, ...protectedOwners({ domain: zone.apex, mask: zone.mask })]);
  for (const r of delta.put) names.add(absoluteName(r.name, zone.apex));
  for (const r of delta.del) names.add(absoluteName(r.name, zone.apex));
  return new Map([...names].map((n) => [n, zone.nodes.get(n)]));
}

/** A zone with record differences applied over it, by id (one it already has changes nothing). */
export function withDeltas(zone: Zone, deltas: Deferred['deltas']): Zone {
  const byId = new Map(zone.records.map((r) => [r.id, r]));
  let domain = zone.domain;
  for (const { delta, revision } of deltas) {
    for (const { id } of delta.del) byId.delete(id);
    for (const record of delta.put) byId.set(record.id, record);
    domain = afterRecords(domain, revision);
  }
  return { domain, records: [...byId.values()] };
}
