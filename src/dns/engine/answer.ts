// The answer engine: a pure function of the zone index, the question and the client's location
// (RFC 1034 §4.3.2, with RFC 2308 negative answers, RFC 4592 wildcards, RFC 6604 CNAME rcodes,
// RFC 8020 empty non-terminals, RFC 8482 ANY). Wire concerns (EDNS, size, case) live elsewhere.
import { QTYPE, RCODE } from '../wire/constants.ts';
import type { ZoneIndex } from '../zone/index.ts';
import { typeSet, type NameNode, type RRset, type TypeSet, type ZoneData } from '../zone/types.ts';
import type { Answer, ClientLocation, Question } from './types.ts';

/** CNAME chains are followed this far inside our zones, then left to the resolver. */
export const MAX_CNAME_CHAIN = 8;
/** RFC 8482 §4.2: the synthesised answer to ANY. */
const RFC8482_TTL = 3600;

interface Walk {
  answer: Answer;
  client: ClientLocation;
}

/** Picks the variant for the client: its country, else its continent, else the general set. */
function choose(set: TypeSet | undefined, walk: Walk): RRset | undefined {
  if (!set) return undefined;
  if (set.byTarget) {
    walk.answer.geoUsed = true;
    const { country, continent } = walk.client;
    const chosen = (country !== undefined && set.byTarget.get(country)) || (continent !== undefined && set.byTarget.get(continent));
    if (chosen) return chosen;
  }
  return set.rdata.length > 0 ? set : undefined;
}

const owned = (set: RRset, name: string): RRset => (set.name === name ? set : { name, type: set.type, ttl: set.ttl, rdata: set.rdata });

const isBelow = (name: string, ancestor: string) => name.length > ancestor.length && name.endsWith(`.${ancestor}`);

/** The delegation cut at or above `qname` (below the apex), if any; closest to the apex first. */
function findCut(zone: ZoneData, qname: string, qtype: number): string | undefined {
  if (zone.cuts.size === 0) return undefined;
  const labels = qname.slice(0, qname.length - zone.apex.length - 1).split('.');
  for (let i = labels.length - 1; i >= 0; i--) {
    const name = `${labels.slice(i).join('.')}.${zone.apex}`;
    // DS lives on the parent side of a cut (RFC 4035 §3.1.4.1): answer it here, not as a referral.
    if (zone.cuts.has(name) && !(name === qname && qtype === QTYPE.DS)) return name;
  }
  return undefined;
}

function negative(walk: Walk, zone: ZoneData, rcode: number): void {
  walk.answer.rcode = rcode;
  walk.answer.authority.push({ ...zone.soa, ttl: zone.negativeTtl });
}

/** A/AAAA of in-zone target names (MX exchanges, SRV targets, glue) into ADDITIONAL. */
function addAddresses(walk: Walk, zone: ZoneData, targets: Iterable<string>, allowBelowCut: boolean): void {
  const seen = new Set<string>();
  for (const target of targets) {
    if (!target || seen.has(target) || !(target === zone.apex || isBelow(target, zone.apex))) continue;
    seen.add(target);
    if (!allowBelowCut && findCut(zone, target, QTYPE.A)) continue;
    const node = zone.nodes.get(target);
    if (!node) continue;
    for (const type of [QTYPE.A, QTYPE.AAAA]) {
      const set = choose(typeSet(node, type), walk);
      if (set) walk.answer.additional.push(set);
    }
  }
}

function additionalFor(walk: Walk, zone: ZoneData, set: RRset): void {
  const targets: string[] = [];
  if (set.type === QTYPE.SVCB || set.type === QTYPE.HTTPS) svcbTargets(walk, zone, set, targets);
  for (const r of set.rdata) {
    if (r.type === QTYPE.MX) targets.push(r.exchange);
    else if (r.type === QTYPE.SRV) targets.push(r.target);
  }
  if (targets.length > 0) addAddresses(walk, zone, targets, false);
}

/**
 * RFC 9460 §4.1, as BIND does (NSD 4.6 adds none): a ServiceMode record's target ("." is the owner) is looked
 * up for A/AAAA; an AliasMode target's own SVCB/HTTPS set goes in too (one step, no chase), with
 * the addresses of its targets. Only in-zone names outside delegations, each once.
 */
function svcbTargets(walk: Walk, zone: ZoneData, set: RRset, targets: string[]): void {
  const aliases: string[] = [];
  for (const r of set.rdata) {
    if (!('params' in r)) continue;
    if (r.priority > 0) targets.push(r.target === '' ? set.name : r.target);
    else if (r.target !== '' && r.target !== set.name) {
      targets.push(r.target);
      aliases.push(r.target);
    }
  }
  for (const alias of new Set(aliases)) {
    if (!(alias === zone.apex || isBelow(alias, zone.apex)) || findCut(zone, alias, set.type)) continue;
    const node = zone.nodes.get(alias);
    const aliased = node && choose(typeSet(node, set.type), walk);
    if (!aliased) continue;
    walk.answer.additional.push(aliased);
    for (const r of aliased.rdata) if ('params' in r && r.priority > 0) targets.push(r.target === '' ? alias : r.target);
  }
}

function referral(walk: Walk, zone: ZoneData, cut: string): void {
  const delegation = typeSet(zone.nodes.get(cut)!, QTYPE.NS);
  const ns = delegation && delegation.rdata.length > 0 ? delegation : undefined;
  // After a CNAME we answered with authority, the referral only continues the chain (RFC 1034
  // §4.3.2 step 3b): the answer stays authoritative for the question's name.
  if (walk.answer.answer.length === 0) walk.answer.aa = false;
  if (!ns) return;
  walk.answer.authority.push(ns);
  // Addresses of the delegated name servers that this zone holds: glue below the cut, and
  // in-zone names beside it (a resolver needs them to follow the referral).
  addAddresses(
    walk,
    zone,
    ns.rdata.flatMap((r) => (r.type === QTYPE.NS ? [r.target] : [])),
    true,
  );
}

/** Finds the node for `qname` or the wildcard that covers it (RFC 4592 §3.3.1). */
function lookup(zone: ZoneData, qname: string): { node?: NameNode; exists: boolean; wildcard: boolean } {
  const node = zone.nodes.get(qname);
  if (node) return { node, exists: true, wildcard: false };
  if (zone.ents.has(qname)) return { exists: true, wildcard: false };
  // The closest encloser is the longest existing ancestor; only its "*" child may synthesise.
  let encloser = qname;
  while (encloser !== zone.apex) {
    encloser = encloser.slice(encloser.indexOf('.') + 1);
    if (zone.nodes.has(encloser) || zone.ents.has(encloser)) break;
  }
  const wild = zone.nodes.get(`*.${encloser}`);
  return wild ? { node: wild, exists: true, wildcard: true } : { exists: false, wildcard: false };
}

/** Answers `qname` inside `zone`, following CNAMEs across our zones. */
function resolve(index: ZoneIndex, zone: ZoneData, qname: string, qtype: number, walk: Walk, visited: Set<string>): void {
  if (!walk.answer.zones.includes(zone)) walk.answer.zones.push(zone);
  const cut = findCut(zone, qname, qtype);
  if (cut) {
    // For the question itself, or at the end of a CNAME chain into a delegated part (RFC 1034
    // §4.3.2 step 3b: the CNAME, then the referral, as NSD and PowerDNS answer).
    referral(walk, zone, cut);
    return;
  }
  const found = lookup(zone, qname);
  if (!found.exists) return negative(walk, zone, RCODE.NXDOMAIN);
  const node = found.node;
  if (!node) return negative(walk, zone, RCODE.NOERROR);

  if (qtype === QTYPE.ANY) {
    // RFC 8482 §4.2: one small synthesised RRset instead of everything at the name.
    walk.answer.answer.push({ name: qname, type: QTYPE.HINFO, ttl: RFC8482_TTL, rdata: [{ type: 13, cpu: 'RFC8482', os: '' }] });
    return;
  }
  const exact = choose(typeSet(node, qtype), walk);
  if (exact) {
    const set = owned(exact, qname);
    walk.answer.answer.push(set);
    additionalFor(walk, zone, set);
    return;
  }
  const cname = qtype === QTYPE.CNAME ? undefined : choose(typeSet(node, QTYPE.CNAME), walk);
  if (!cname) return negative(walk, zone, RCODE.NOERROR);

  walk.answer.answer.push(owned(cname, qname));
  const target = (cname.rdata[0] as { target: string }).target;
  visited.add(qname);
  if (visited.has(target) || visited.size > MAX_CNAME_CHAIN) return;
  const next = index.findZone(target);
  // Outside our zones the resolver follows the chain itself.
  if (next) resolve(index, next, target, qtype, walk, visited);
}

/**
 * The zone a question is answered from: the closest enclosing one, except for DS at the apex of a
 * zone whose parent is served here too and delegates it: DS belongs to the parent side of the cut
 * (RFC 4035 §3.1.4.1), signed by the parent, whose NSEC proves an insecure delegation.
 */
function zoneFor(index: ZoneIndex, question: Question): ZoneData | undefined {
  const zone = index.findZone(question.qname);
  if (!zone || question.qtype !== QTYPE.DS || zone.apex !== question.qname) return zone;
  const dot = zone.apex.indexOf('.');
  const parent = dot === -1 ? undefined : index.findZone(zone.apex.slice(dot + 1));
  return parent?.cuts.has(zone.apex) ? parent : zone;
}

export function answer(index: ZoneIndex, question: Question, client: ClientLocation): Answer {
  const result: Answer = { rcode: RCODE.NOERROR, aa: true, answer: [], authority: [], additional: [], zones: [], geoUsed: false };
  const zone = zoneFor(index, question);
  if (!zone) return { ...result, rcode: RCODE.REFUSED, aa: false };
  resolve(index, zone, question.qname, question.qtype, { answer: result, client }, new Set());
  return result;
}
