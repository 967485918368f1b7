// Builds the served form of a zone from the store's zone document: the customer's records, the
// service's SOA and apex NS, and the protected names (DESIGN §9). Pure: same input, same output,
// on every name server.
import { parseBackend } from '../../model/backend.ts';
import { ipToBytes } from '../../model/ip.ts';
import { absoluteName } from '../../model/names.ts';
import { countryByIsoCode } from '../../geo/targets.ts';
import type { EdgeNode } from '../../model/node.ts';
import type { RecordState } from '../../model/record.ts';
import { APEX_NS_TTL, parseSoaValue, SOA_DEFAULTS } from '../../model/record-values.ts';
import { txtStrings } from '../../model/txt-strings.ts';
import { RECORD_TYPES, TYPE } from '../../model/record-types.ts';
import { valueType } from '../../model/values/index.ts';
import { servedRevision, type DomainState } from '../../model/domain.ts';
import type { Zone } from '../../store/types.ts';
import { QTYPE } from '../wire/constants.ts';
import { svcbKey, svcbRdata } from './svcb.ts';
import { KEY_APEX_TYPES, zoneSigningOf } from './signing-keys.ts';
import { typeSet, type NameNode, type RData, type RRset, type TypeSet, type ZoneData } from './types.ts';

export interface ZoneBuildContext {
  nameservers: readonly [string, string];
  hostmaster: string;
  nodes: readonly EdgeNode[];
  /** Revision of the last node change: part of the serial of zones whose answers use nodes. */
  nodesRevision: number;
}

const NONE: ReadonlySet<string> = new Set();

// The service's SOA timers and apex NS TTL are the model's (the API's zone-file export writes them too).
export { APEX_NS_TTL, SOA_DEFAULTS } from '../../model/record-values.ts';
/** TTL of protected names' synthesised addresses: short, so moving traffic between edges is quick. */
export const PROTECTED_TTL = 300;
/**
 * TTL of a DNS-only domain's protected names when it has a failover: short, so that resolvers
 * follow the switch to the failover (and back) within half a minute, as health-checked DNS does.
 */
export const FAILOVER_TTL = 30;


function rdataOf(record: RecordState): RData {
  const v = record.value;
  switch (record.type) {
    case TYPE.SVCB:
    case TYPE.HTTPS:
      return svcbRdata(RECORD_TYPES[record.type].dnsType, v);
    case TYPE.A:
      return { type: 1, address: ipv4ToInt(v) };
    case TYPE.AAAA:
      return { type: 28, address: Buffer.from(ipToBytes(v)) };
    case TYPE.CNAME:
      return { type: 5, target: v };
    case TYPE.NS:
      return { type: 2, target: v };
    case TYPE.MX:
      // A null MX (".") is the root name as exchange (RFC 7505).
      return { type: 15, preference: record.priority ?? 0, exchange: v === '.' ? '' : v };
    case TYPE.TXT:
      return { type: 16, strings: txtStrings(v) };
    case TYPE.SRV: {
      const [weight, port, target] = v.split(' ');
      return { type: 33, priority: record.priority ?? 0, weight: Number(weight), port: Number(port), target: target === '.' ? '' : target! };
    }
    default: {
      const kind = valueType(record.type);
      if (!kind) throw new Error(`no RDATA for API type ${record.type}`);
      return { type: 0, data: kind.rdata(v) };
    }
  }
}

/**
 * What makes two RDATAs of one type equal, as a string: the wire bytes' content, built without
 * JSON (a Buffer would serialise as an array of numbers). Latin-1 maps each byte to one char.
 */
export function rdataKey(r: RData): string {
  switch (r.type) {
    case 64:
    case 65:
      return svcbKey(r);
    case 1:
      return String(r.address);
    case 28:
      return r.address.toString('latin1');
    case 2:
    case 5:
      return r.target;
    case 15:
      return `${r.preference} ${r.exchange}`;
    case 16:
      // U+0100 cannot come out of a Latin-1 decode: an unambiguous separator between strings.
      return r.strings.map((b) => b.toString('latin1')).join('\u0100');
    case 33:
      return `${r.priority} ${r.weight} ${r.port} ${r.target}`;
    case 0:
      return r.data.toString('latin1');
    default:
      return JSON.stringify(r);
  }
}

/**
 * The RDATA keys of each set built so far, for deduplication in constant time per record: a
 * zone of n records at one name builds in O(n), not O(n²). Made per build and dropped after it.
 */
type SeenKeys = Map<RRset, Set<string>>;

/**
 * Adds one record to an RRset: duplicates are dropped and the set keeps its lowest TTL. `seen`
 * undefined: the caller knows this RDATA is not in the set (no other record has it).
 */
function addTo(set: RRset, ttl: number, rdata: RData, seen: SeenKeys | undefined): void {
  set.ttl = Math.min(set.ttl, ttl);
  if (!seen) {
    set.rdata.push(rdata);
    return;
  }
  let keys = seen.get(set);
  if (!keys) {
    keys = new Set(set.rdata.map(rdataKey));
    seen.set(set, keys);
  }
  const key = rdataKey(rdata);
  if (keys.has(key)) return;
  keys.add(key);
  set.rdata.push(rdata);
}

// New arrays start as one-element literals: most names hold one type and most sets one record,
// and an array that grows by push reserves room for 17.
function addRecord(
  nodes: Map<string, NameNode>,
  seen: SeenKeys | undefined,
  name: string,
  type: number,
  ttl: number,
  rdata: RData,
  targets: readonly number[],
): void {
  const node = nodes.get(name);
  let set: TypeSet | undefined = node && typeSet(node, type);
  if (!set) {
    set = targets.length === 0 ? { name, type, ttl, rdata: [rdata] } : { name, type, ttl, rdata: [] };
    if (node) node.push(set);
    else nodes.set(name, [set]);
    if (targets.length === 0) return;
  } else if (targets.length === 0) {
    if (set.rdata.length === 0) {
      set.ttl = ttl;
      set.rdata = [rdata];
    } else addTo(set, ttl, rdata, seen);
    return;
  }
  set.byTarget ??= new Map();
  for (const t of targets) {
    const variant = set.byTarget.get(t);
    if (variant) addTo(variant, ttl, rdata, seen);
    else set.byTarget.set(t, { name, type, ttl, rdata: [rdata] });
  }
}

/** Arrays that grew by push keep room for 17 elements: copy those to their exact length. */
export function compact(nodes: Map<string, NameNode>): void {
  for (const [name, node] of nodes) {
    if (node.length > 1) nodes.set(name, node.slice());
    for (const set of node) {
      if (set.rdata.length > 1) set.rdata = set.rdata.slice();
      if (set.byTarget) for (const variant of set.byTarget.values()) if (variant.rdata.length > 1) variant.rdata = variant.rdata.slice();
    }
  }
}

/** A canonical dotted quad as one int32 (parsed by hand: this runs for millions of records). */
function ipv4ToInt(address: string): number {
  let value = 0;
  let octet = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) {
      value = (value << 8) | octet;
      octet = 0;
    } else octet = octet * 10 + (c - 48);
  }
  return (value << 8) | octet;
}

interface ProtectedSet {
  v4: number[];
  v6: Buffer[];
}

export interface ProtectedAddresses extends ProtectedSet {
  /** Country or continent GeoNames ID → the addresses of the serving nodes there. */
  near: Map<number, ProtectedSet>;
  /** TTL of the answers (PROTECTED_TTL unless said). */
  ttl?: number;
}

const addressesOf = (nodes: readonly EdgeNode[]): ProtectedSet => ({
  v4: nodes.flatMap((n) => (n.ipv4 ? [ipv4ToInt(n.ipv4)] : [])),
  v6: nodes.flatMap((n) => (n.ipv6 ? [Buffer.from(ipToBytes(n.ipv6))] : [])),
});

/**
 * Addresses the protected names resolve to: the serving edge nodes when protection is on (those
 * in the client's country, else its continent, else all), the backend when it is off.
 */
export function protectedAddresses(domain: DomainState, ctx: ZoneBuildContext): ProtectedAddresses {
  if (!domain.enabled) {
    // DNS only: the backend's address (its port is the edge's business, not DNS's), or the
    // failover's while the edges see the backend down.
    const target = domain.failover && domain.failover_active ? domain.failover : domain.backend;
    const address = parseBackend(target)?.address ?? target;
    const backend = Buffer.from(ipToBytes(address));
    const ttl = domain.failover ? FAILOVER_TTL : PROTECTED_TTL;
    return backend.length === 4 ? { v4: [ipv4ToInt(address)], v6: [], near: new Map(), ttl } : { v4: [], v6: [backend], near: new Map(), ttl };
  }
  const bound = new Set(domain.bind_node);
  const serving = ctx.nodes.filter((n) => n.status === 'active' && (bound.size === 0 || bound.has(n.id)));
  const byPlace = new Map<number, EdgeNode[]>();
  for (const node of serving) {
    const place = countryByIsoCode(node.location);
    if (!place) continue;
    for (const id of [place.id, place.continentId!]) {
      const here = byPlace.get(id);
      if (here) here.push(node);
      else byPlace.set(id, [node]);
    }
  }
  const near = new Map<number, ProtectedSet>();
  for (const [id, nodes] of byPlace) near.set(id, addressesOf(nodes));
  return { ...addressesOf(serving), near };
}

/**
 * The records whose name, type, priority and value another record of the zone shares. Values are
 * compared only among records sharing the rest: a zone of big TXT values at distinct names never
 * joins them into keys (that was most of a build of 1,000 × 4,000-byte TXT).
 */
function repeatedRecords(records: readonly RecordState[]): Set<RecordState> {
  const first = new Map<string, RecordState | Map<string, RecordState>>();
  const out = new Set<RecordState>();
  for (const record of records) {
    const key = `${record.name}\u0000${record.type}\u0000${record.priority ?? ''}`;
    const seen = first.get(key);
    if (seen === undefined) {
      first.set(key, record);
      continue;
    }
    let byValue: Map<string, RecordState>;
    if (seen instanceof Map) byValue = seen;
    else first.set(key, (byValue = new Map([[seen.value, seen]])));
    const earlier = byValue.get(record.value);
    if (earlier) out.add(earlier).add(record);
    else byValue.set(record.value, record);
  }
  return out;
}

/** Whether a name is a delegation point or lies under one: its own ancestors looked up, O(labels). */
export function atOrUnderCut(name: string, apex: string, cuts: ReadonlySet<string>): boolean {
  if (cuts.size === 0) return false;
  for (let at = -1, rest = name; rest.length > apex.length; at = name.indexOf('.', at + 1), rest = name.slice(at + 1)) {
    if (cuts.has(rest)) return true;
    if (name.indexOf('.', at + 1) === -1) break;
  }
  return false;
}

/**
 * Adds the records of one or more owners to `nodes` (SOA records are the caller's: they shape
 * the apex SOA). Returns whether any record is geo-targeted.
 */
export function addRecords(nodes: Map<string, NameNode>, records: readonly RecordState[], apex: string, cuts: Set<string> | undefined, seen: SeenKeys = new Map()): boolean {
  let hasGeo = false;
  // Records are canonical, so equal fields mean equal RDATA: only records whose fields repeat at
  // their name need the per-set duplicate check (one map of n keys, not one entry per geo variant).
  const repeats = repeatedRecords(records);
  for (const record of records) {
    if (record.type === TYPE.SOA) continue;
    const name = absoluteName(record.name, apex);
    const dnsType = RECORD_TYPES[record.type].dnsType;
    if (cuts && dnsType === QTYPE.NS && name !== apex) cuts.add(name);
    if (record.target.length > 0) hasGeo = true;
    addRecord(nodes, repeats.has(record) ? seen : undefined, name, dnsType, record.ttl, rdataOf(record), record.target);
  }
  return hasGeo;
}

/** The names that answer with the serving addresses: the apex and the mask's names (absolute). */
export function protectedOwners(domain: Pick<DomainState, 'domain' | 'mask'>): string[] {
  const mask = domain.mask === '' ? [] : domain.mask.split(',');
  return ['@', ...mask].map((n) => absoluteName(n, domain.domain));
}

/**
 * Gives a protected name the serving addresses, unless the customer set an address or alias
 * there or it lies at or under a delegation. Returns whether any answer depends on location.
 */
export function addProtected(nodes: Map<string, NameNode>, owner: string, addresses: ProtectedAddresses, apex: string, cuts: ReadonlySet<string>, seen: SeenKeys = new Map()): boolean {
  let hasGeo = false;
  const existing = nodes.get(owner);
  if (existing && (typeSet(existing, QTYPE.A) || typeSet(existing, QTYPE.AAAA) || typeSet(existing, QTYPE.CNAME))) return false;
  if (atOrUnderCut(owner, apex, cuts)) return false;
  if (addresses.v4.length + addresses.v6.length === 0) return false;
  const ttl = addresses.ttl ?? PROTECTED_TTL;
  for (const address of addresses.v4) addRecord(nodes, seen, owner, QTYPE.A, ttl, { type: 1, address }, []);
  for (const address of addresses.v6) addRecord(nodes, seen, owner, QTYPE.AAAA, ttl, { type: 28, address }, []);
  // Nearby nodes as geo variants: the engine picks them as it picks a customer's targeted records.
  // A variant only where it narrows the set: otherwise the answer does not depend on location.
  for (const [place, set] of addresses.near) {
    if (set.v4.length > 0 && set.v4.length < addresses.v4.length) {
      for (const address of set.v4) addRecord(nodes, seen, owner, QTYPE.A, PROTECTED_TTL, { type: 1, address }, [place]);
      hasGeo = true;
    }
    if (set.v6.length > 0 && set.v6.length < addresses.v6.length) {
      for (const address of set.v6) addRecord(nodes, seen, owner, QTYPE.AAAA, PROTECTED_TTL, { type: 28, address }, [place]);
      hasGeo = true;
    }
  }
  return hasGeo;
}

/** The service's apex SOA (serial from the zone's revision; the customer's SOA record may set the rest) and NS sets. */
export function apexSets(domain: DomainState, soaRecord: RecordState | undefined, ctx: ZoneBuildContext): { soa: RRset; ns: RRset; serial: number; negativeTtl: number } {
  const apex = domain.domain;
  // The claim's own pair (issue 26): a resolver asking at the apex hears the names delegated to.
  const nameservers = domain.claim?.nameservers ?? ctx.nameservers;
  // The revision of the domain's last change name servers answer from (a change of tags alone leaves the serial).
  const serial = Math.max(servedRevision(domain), domain.enabled ? ctx.nodesRevision : 0) >>> 0;
  const custom = soaRecord && parseSoaValue(soaRecord.value);
  const soaTtl = soaRecord?.ttl ?? SOA_DEFAULTS.ttl;
  const soaData: RData = {
    type: 6,
    mname: nameservers[0],
    rname: custom?.rname ?? ctx.hostmaster,
    serial,
    refresh: custom?.refresh ?? SOA_DEFAULTS.refresh,
    retry: custom?.retry ?? SOA_DEFAULTS.retry,
    expire: custom?.expire ?? SOA_DEFAULTS.expire,
    minimum: custom?.minimum ?? SOA_DEFAULTS.minimum,
  };
  const soa: RRset = { name: apex, type: QTYPE.SOA, ttl: soaTtl, rdata: [soaData] };
  const ns: RRset = { name: apex, type: QTYPE.NS, ttl: APEX_NS_TTL, rdata: nameservers.map((target) => ({ type: 2 as const, target })) };
  return { soa, ns, serial, negativeTtl: Math.min(soaTtl, soaData.minimum) };
}

/** The apex node with the service's SOA and NS sets (and the signing keys' DNSKEY set) in place of any others. */
export function withApexSets(node: NameNode | undefined, soa: RRset, ns: RRset, keySets: readonly RRset[] = []): NameNode {
  const kept = (node ?? []).filter((set) => set.type !== QTYPE.SOA && set.type !== QTYPE.NS && !KEY_APEX_TYPES.has(set.type));
  return [...kept, soa, ns, ...keySets];
}

/** The customer's SOA record, if any (it can only be at the apex; should there be two, the oldest). */
export function soaRecordOf(records: readonly RecordState[] | undefined): RecordState | undefined {
  let soa: RecordState | undefined;
  for (const r of records ?? []) if (r.type === TYPE.SOA && (!soa || r.id < soa.id)) soa = r;
  return soa;
}

/** Each owner name's records (absolute names): what a later change rebuilds a name from. */
export function bySource(records: readonly RecordState[], apex: string): Map<string, RecordState[]> {
  const out = new Map<string, RecordState[]>();
  for (const record of records) {
    const name = absoluteName(record.name, apex);
    const list = out.get(name);
    if (list) list.push(record);
    else out.set(name, [record]);
  }
  return out;
}

/**
 * `keepSources`: keep the records by owner name in the result (what a later difference patches
 * from). Off for the bulk of zones (a snapshot load): they would double the index's memory, and
 * a zone's first difference reads its records from the feeder instead.
 */
export function buildZone(zone: Zone, ctx: ZoneBuildContext, keepSources = false): ZoneData {
  const apex = zone.domain.domain;
  const nodes = new Map<string, NameNode>();
  const cuts = new Set<string>();
  // One map of seen RDATA for the whole build (made per set only where records repeat).
  const seen: SeenKeys = new Map();
  let hasGeo = addRecords(nodes, zone.records, apex, cuts, seen);

  // Protected names: the apex and the mask's names, where the customer set no address or alias.
  const addresses = protectedAddresses(zone.domain, ctx);
  for (const owner of protectedOwners(zone.domain)) if (addProtected(nodes, owner, addresses, apex, cuts, seen)) hasGeo = true;

  const { soa, ns, serial, negativeTtl } = apexSets(zone.domain, soaRecordOf(zone.records), ctx);
  const { signing, keyless } = zoneSigningOf(zone.domain);
  nodes.set(apex, withApexSets(nodes.get(apex), soa, ns, signing?.apexSets));

  // Every ancestor of an owner, up to the apex, exists: as itself or as an empty non-terminal.
  const ents = new Set<string>();
  for (const name of nodes.keys()) {
    let parent = name;
    while (parent.length > apex.length) {
      parent = parent.slice(parent.indexOf('.') + 1);
      if (parent.length <= apex.length) break;
      // An owner's ancestors are walked from that owner, an ENT's from where it was found: stop
      // there, so names sharing long ancestries cost O(labels) in all, not O(labels) each.
      if (nodes.has(parent) || ents.has(parent)) break;
      ents.add(parent);
    }
  }

  compact(nodes);
  return {
    apex,
    signing,
    keyless,
    domain: keepSources ? zone.domain : undefined,
    sources: keepSources ? bySource(zone.records, apex) : undefined,
    nodes,
    // Most zones have neither: share one empty set rather than hold two per zone.
    ents: ents.size > 0 ? ents : NONE,
    cuts: cuts.size > 0 ? cuts : NONE,
    soa,
    ns,
    negativeTtl,
    serial,
    hasGeo,
    usesNodes: zone.domain.enabled,
    mask: zone.domain.mask,
    stale: false,
  };
}
