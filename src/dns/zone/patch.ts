// Applies a record-level change (the feed's difference) to a built zone: only the owner names it
// touches are rebuilt, from the records kept per name, so a change costs the same in a zone of
// 20 records and of 200,000. The result equals what buildZone makes of the changed records (the
// tests compare the two). Pure apart from reusing the zone's maps: the caller swaps the returned
// zone in and marks the old one stale in the same synchronous step.
import type { RecordState } from '../../model/record.ts';
import { absoluteName } from '../../model/names.ts';
import { TYPE } from '../../model/record-types.ts';
import { afterRecords, headOver, type DomainState } from '../../model/domain.ts';
import type { RecordDelta, Zone } from '../../store/types.ts';
import { zoneSigningOf } from './signing-keys.ts';
import { addProtected, addRecords, apexSets, buildZone, bySource, compact, protectedAddresses, protectedOwners, soaRecordOf, withApexSets, type ProtectedAddresses, type ZoneBuildContext } from './build.ts';
import type { NameNode, ZoneData } from './types.ts';

const NO_NAMES: ReadonlySet<string> = new Set();
/** Below this many records changed, a change is always patched name by name. */
const WHOLE_REBUILD_MIN = 64;

/** The zone built again from its kept records with the change applied (a change of much of it). */
function rebuiltWhole(domain: DomainState, records: readonly RecordState[], delta: RecordDelta, ctx: ZoneBuildContext): ZoneData {
  const byId = new Map<number, RecordState>();
  for (const record of records) byId.set(record.id, record);
  for (const { id } of delta.del) byId.delete(id);
  for (const record of delta.put) byId.set(record.id, record);
  return buildZone({ domain, records: [...byId.values()] }, ctx, true);
}

/**
 * `stored`: the zone as it was before this difference (domain and records), asked for only when
 * the built zone keeps neither (its first difference since a whole build). `settings`: the
 * domain's settings as they now are, when they changed (a name server's answers depend on them at
 * the protected names and the apex only: those are rebuilt, as they were and as they are now).
 */
export function patchZone(zone: ZoneData, delta: RecordDelta, revision: number, ctx: ZoneBuildContext, stored: () => Zone, settings?: DomainState): ZoneData {
  const { apex, nodes } = zone;
  const base = zone.sources && zone.domain ? undefined : stored();
  const sources = zone.sources ?? bySource(base!.records, apex);
  const before = afterRecords(zone.domain ?? base!.domain, revision);
  const domain: DomainState = settings ? headOver(settings, before) : before;
  // A change that touches much of the zone costs a build of it anyway: build it whole.
  if (delta.put.length + delta.del.length > WHOLE_REBUILD_MIN && (delta.put.length + delta.del.length) * 4 > sources.size) {
    return rebuiltWhole(domain, [...sources.values()].flat(), delta, ctx);
  }
  const touched = applyToSources(sources, delta, apex);
  // Delegations among the touched names; if one appears or goes, the protected names are re-judged.
  const { cuts, cutsChanged } = cutsAfter(zone.cuts, touched, sources, apex);
  // Protected names as judged by the mask the zone was built with (the feeder's copy of the domain
  // may be newer), unless the settings are what changes.
  const owners = protectedOwners(settings ? domain : { domain: apex, mask: zone.mask });
  const rebuild = new Set(touched);
  if (cutsChanged || settings) for (const owner of owners) rebuild.add(owner);
  // Names protected as built and no longer: their synthesised addresses go.
  if (settings) for (const owner of protectedOwners({ domain: apex, mask: zone.mask })) rebuild.add(owner);

  const sets = apexSets(domain, soaRecordOf(sources.get(apex)), ctx);
  // The keys (their KeyObjects) are made again only when the settings change, not per record change.
  const { signing, keyless } = settings ? zoneSigningOf(domain) : zone;
  const keySets = signing?.apexSets;
  let addresses: ProtectedAddresses | undefined;
  let hasGeo = zone.hasGeo;
  const appeared: string[] = [];
  const vanished: string[] = [];
  for (const owner of rebuild) {
    const had = nodes.has(owner);
    const built = new Map<string, NameNode>();
    if (addRecords(built, sources.get(owner) ?? [], apex, undefined)) hasGeo = true;
    if (owners.includes(owner)) {
      addresses ??= protectedAddresses(domain, ctx);
      if (addProtected(built, owner, addresses, apex, cuts)) hasGeo = true;
    }
    if (owner === apex) built.set(apex, withApexSets(built.get(apex), sets.soa, sets.ns, keySets));
    compact(built);
    const node = built.get(owner);
    if (node) nodes.set(owner, node);
    else nodes.delete(owner);
    if (node && !had) appeared.push(owner);
    if (!node && had) vanished.push(owner);
  }
  // The serial changes with every change: the apex's SOA set is replaced whether or not touched.
  if (!rebuild.has(apex)) nodes.set(apex, withApexSets(nodes.get(apex), sets.soa, sets.ns, keySets));

  // Empty non-terminals: a name exists while it holds data or an existing name lies below it.
  let { children, ents } = zone;
  if (appeared.length + vanished.length > 0) {
    const had = new Map<string, boolean>([...appeared.map((n) => [n, false] as const), ...vanished.map((n) => [n, true] as const)]);
    ({ children, ents } = settleExistence(zone, had));
  }

  return {
    ...zone,
    signing,
    keyless,
    domain,
    sources,
    children,
    ents,
    cuts: cuts.size > 0 ? cuts : NO_NAMES,
    soa: sets.soa,
    ns: sets.ns,
    serial: sets.serial,
    negativeTtl: sets.negativeTtl,
    hasGeo,
    usesNodes: domain.enabled,
    // A change of records judges only the names it touches by the domain it has: the names as
    // built stay to be re-judged by the next settings change.
    mask: settings ? domain.mask : zone.mask,
    stale: false,
  };
}

/** The difference applied to the records kept per owner name (`sources`, changed in place): the owner names it touched. */
function applyToSources(sources: Map<string, RecordState[]>, delta: RecordDelta, apex: string): Set<string> {
  const touched = new Set<string>();
  // Per owner name: ids removed, records written (one new list per name, however many records).
  const removed = new Map<string, Set<number>>();
  const written = new Map<string, Map<number, RecordState>>();
  for (const { id, name } of delta.del) {
    const owner = absoluteName(name, apex);
    let ids = removed.get(owner);
    if (!ids) removed.set(owner, (ids = new Set()));
    ids.add(id);
    touched.add(owner);
  }
  for (const record of delta.put) {
    const owner = absoluteName(record.name, apex);
    let byId = written.get(owner);
    if (!byId) written.set(owner, (byId = new Map()));
    byId.set(record.id, record);
    touched.add(owner);
  }
  for (const owner of touched) {
    const gone = removed.get(owner);
    const puts = written.get(owner);
    const list: RecordState[] = [];
    for (const record of sources.get(owner) ?? []) {
      if (gone?.has(record.id) && !puts?.has(record.id)) continue;
      const replaced = puts?.get(record.id);
      list.push(replaced ?? record);
      if (replaced) puts!.delete(record.id);
    }
    if (puts) for (const record of puts.values()) list.push(record);
    if (list.length === 0) sources.delete(owner);
    else sources.set(owner, list);
  }
  return touched;
}

/** The delegations after the difference, among the touched names (a new set only when one appears or goes). */
function cutsAfter(before: ReadonlySet<string>, touched: ReadonlySet<string>, sources: ReadonlyMap<string, RecordState[]>, apex: string): { cuts: ReadonlySet<string>; cutsChanged: boolean } {
  let cuts = before;
  let cutsChanged = false;
  for (const owner of touched) {
    if (owner === apex) continue;
    const isCut = sources.get(owner)?.some((r) => r.type === TYPE.NS) ?? false;
    if (isCut === cuts.has(owner)) continue;
    if (!cutsChanged) cuts = new Set(cuts);
    cutsChanged = true;
    if (isCut) (cuts as Set<string>).add(owner);
    else (cuts as Set<string>).delete(owner);
  }
  return { cuts, cutsChanged };
}

/** The zone as kept (undefined when it keeps nothing: the feeder has it). */
export function keptZone(zone: ZoneData): Zone | undefined {
  return zone.sources && zone.domain && { domain: zone.domain, records: [...zone.sources.values()].flat() };
}

/**
 * Keeps the empty non-terminals right after owner names appeared or vanished (`had`: name →
 * whether it held data before), in O(labels) per name. A name exists while it holds data or has
 * an existing child; each existing name below the apex counts once for its parent (`children`,
 * counted from the zone's names the first time it is needed: O(names), once). A name whose
 * existence flips passes the change to its parent.
 */
function settleExistence(zone: ZoneData, had: Map<string, boolean>): { children: Map<string, number>; ents: ReadonlySet<string> } {
  const { apex, nodes } = zone;
  const ents = new Set(zone.ents);
  const pending = new Map(had);
  const parentOf = (name: string): string | undefined => {
    const parent = name.slice(name.indexOf('.') + 1);
    return parent.length > apex.length ? parent : undefined;
  };
  // Data as recorded so far: a name not yet settled still counts as it was.
  const holdsData = (name: string) => pending.get(name) ?? nodes.has(name);
  const exists = (name: string) => holdsData(name) || ents.has(name);
  let children = zone.children;
  if (!children) {
    const counted = new Map<string, number>();
    const count = (name: string) => {
      const parent = parentOf(name);
      if (parent !== undefined) counted.set(parent, (counted.get(parent) ?? 0) + 1);
    };
    for (const name of nodes.keys()) if (holdsData(name)) count(name);
    for (const [name, held] of had) if (held) count(name);
    for (const name of ents) count(name);
    children = counted;
  }
  const counts = children;
  const judge = (name: string): void => {
    if ((counts.get(name) ?? 0) > 0 && !holdsData(name)) ents.add(name);
    else ents.delete(name);
  };
  const adjust = (name: string | undefined, by: number): void => {
    if (name === undefined) return;
    const before = exists(name);
    const left = (counts.get(name) ?? 0) + by;
    if (left === 0) counts.delete(name);
    else counts.set(name, left);
    judge(name);
    if (exists(name) !== before) adjust(parentOf(name), before ? -1 : 1);
  };
  for (const name of had.keys()) {
    const before = exists(name);
    pending.delete(name);
    judge(name);
    if (exists(name) !== before) adjust(parentOf(name), before ? -1 : 1);
  }
  return { children: counts, ents: ents.size > 0 ? ents : NO_NAMES };
}
