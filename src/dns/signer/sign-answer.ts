// The signer's work on one answer, before it is encoded (a pure function of the answer, the zones
// it came from and the time): RRSIGs over every RRset in ANSWER and AUTHORITY from a signing zone,
// NS of a referral left unsigned (with its DS signed, or an NSEC proving there is none), and
// compact denial (RFC 9824) in place of NXDOMAIN and for NODATA. ADDITIONAL stays unsigned
// (optional data, RFC 4035 §3.1.1; glue must not be signed).
import type { AnswerSpec } from '../chain/context.ts';
import { QTYPE, RCODE } from '../wire/constants.ts';
import { typeSet, type RData, type RRset, type ZoneData } from '../zone/types.ts';
import { NSEC_TYPE, NXNAME_TYPE, nsecRdata, predecessor, RRSIG_TYPE, successor } from './nsec.ts';
import { rrsigFor, type SignerMetrics, type SigningJob } from './rrsig.ts';
import type { SignatureCache } from './signature-cache.ts';
import { MAX_SIGNED_TTL, validityAt, type Validity } from './validity.ts';

export interface SignerTools {
  cache: SignatureCache;
  metrics: SignerMetrics;
  /** Asked before each fresh signature for a zone (by apex); false throws SigningLimited. Absent: unbounded. */
  mayMake?: (apex: string) => boolean;
}

const isAtOrBelow = (name: string, apex: string): boolean => name === apex || apex === '' || name.endsWith(`.${apex}`);

/** The zone (of those the answer was read from) that holds `name`: the one with the longest apex. */
function zoneOf(zones: readonly ZoneData[], name: string): ZoneData | undefined {
  let best: ZoneData | undefined;
  for (const zone of zones) if (isAtOrBelow(name, zone.apex) && (!best || zone.apex.length > best.apex.length)) best = zone;
  return best;
}

const capped = (set: RRset): RRset => (set.ttl > MAX_SIGNED_TTL ? { ...set, ttl: MAX_SIGNED_TTL } : set);

/** The wildcard ("*.encloser") an answer's RRset was synthesised from, or undefined for a name that holds it. */
function wildcardOwner(zone: ZoneData, set: RRset): string | undefined {
  const node = zone.nodes.get(set.name);
  if (node || zone.ents.has(set.name) || set.type === QTYPE.HINFO) return undefined;
  let encloser = set.name;
  while (encloser !== zone.apex) {
    encloser = encloser.slice(encloser.indexOf('.') + 1);
    if (zone.nodes.has(encloser) || zone.ents.has(encloser)) break;
  }
  const wildcard = `*.${encloser}`;
  const wild = zone.nodes.get(wildcard);
  return wild && typeSet(wild, set.type) ? wildcard : undefined;
}

/** What the parent is authoritative for at a cut (RFC 4035 §2.3): never the child's types or occluded data. */
const PARENT_SIDE = new Set<number>([QTYPE.NS, QTYPE.DS]);

/** The types that exist at `name` (at the wildcard that covers it, when it does not exist itself). */
function typesAt(zone: ZoneData, name: string): number[] {
  const node = zone.nodes.get(name);
  if (node && zone.cuts.has(name)) return node.map((set) => set.type).filter((type) => PARENT_SIDE.has(type));
  if (node) return node.map((set) => set.type);
  if (zone.ents.has(name)) return [];
  let encloser = name;
  while (encloser !== zone.apex) {
    encloser = encloser.slice(encloser.indexOf('.') + 1);
    if (zone.nodes.has(encloser) || zone.ents.has(encloser)) break;
  }
  return zone.nodes.get(`*.${encloser}`)?.map((set) => set.type) ?? [];
}

class AnswerSigner {
  readonly validity: Validity;
  private readonly jobs = new Map<ZoneData, SigningJob[]>();

  constructor(
    private readonly tools: SignerTools,
    now: number,
  ) {
    this.validity = validityAt(now);
  }

  private jobsFor(zone: ZoneData): SigningJob[] {
    let jobs = this.jobs.get(zone);
    if (!jobs) {
      const { cache, metrics, mayMake } = this.tools;
      const allow = mayMake && (() => mayMake(zone.apex));
      jobs = (zone.signing?.keys ?? []).map((key) => ({ key, signer: zone.apex, validity: this.validity, cache, metrics, mayMake: allow }));
      this.jobs.set(zone, jobs);
    }
    return jobs;
  }

  /** The set (TTL capped) and its RRSIG set, one signature per active key. */
  signed(out: RRset[], zone: ZoneData, set: RRset, wildcard?: string): void {
    const served = capped(set);
    out.push(served);
    const rdata: RData[] = [];
    for (const job of this.jobsFor(zone)) rdata.push(...rrsigFor(served, job, wildcard).rdata);
    out.push({ name: served.name, type: RRSIG_TYPE, ttl: served.ttl, rdata });
  }

  /** A signed NSEC at `owner`. */
  nsec(out: RRset[], zone: ZoneData, owner: string, next: string, types: Iterable<number>): void {
    this.signed(out, zone, { name: owner, type: NSEC_TYPE, ttl: zone.negativeTtl, rdata: [{ type: 0, data: nsecRdata(next, types) }] });
  }
}

/** Where a CNAME chain from `qname` ends, as far as the answer follows it. */
function chainEnd(answer: readonly RRset[], qname: string): string {
  let name = qname;
  for (let i = 0; i < answer.length; i++) {
    const set = answer[i]!;
    if (set.type === QTYPE.CNAME && set.name === name) name = (set.rdata[0] as { target: string }).target;
  }
  return name;
}

/**
 * Signs `spec` in place for a DNSSEC-OK query of `qname`/`qtype`. Returns the end of the window
 * its signatures were made in (ms): the answer must not be served from a cache past it. Throws
 * SigningLimited when a signature it needs is over the budget (the answer is then not sent).
 */
export function signAnswer(spec: AnswerSpec, qname: string, qtype: number, tools: SignerTools, now: number): number | undefined {
  if (!spec.zones.some((zone) => zone.signing)) return undefined;
  if (spec.rcode !== RCODE.NOERROR && spec.rcode !== RCODE.NXDOMAIN) return undefined;
  const signer = new AnswerSigner(tools, now);
  const answer: RRset[] = [];
  const authority: RRset[] = [];
  const synthesised: Array<{ zone: ZoneData; name: string }> = [];

  for (const set of spec.answer) {
    const zone = zoneOf(spec.zones, set.name);
    if (!zone?.signing) {
      answer.push(set);
      continue;
    }
    const wildcard = wildcardOwner(zone, set);
    signer.signed(answer, zone, set, wildcard);
    if (wildcard && !synthesised.some((s) => s.name === set.name)) synthesised.push({ zone, name: set.name });
  }

  for (const set of spec.authority) {
    const zone = zoneOf(spec.zones, set.name);
    if (!zone?.signing) {
      authority.push(set);
      continue;
    }
    if (set.type === QTYPE.SOA) {
      // A negative answer: the SOA, then the denial of the name the chain ended at.
      signer.signed(authority, zone, set);
      const name = chainEnd(spec.answer, qname);
      if (spec.rcode === RCODE.NXDOMAIN) {
        // RFC 9824 §3.2: NOERROR, and an NSEC at the name saying only that it does not exist.
        spec.rcode = RCODE.NOERROR;
        signer.nsec(authority, zone, name, successor(name), [RRSIG_TYPE, NSEC_TYPE, NXNAME_TYPE]);
      } else {
        const types = typesAt(zone, name).filter((t) => t !== qtype);
        signer.nsec(authority, zone, name, successor(name), [...types, RRSIG_TYPE, NSEC_TYPE]);
      }
    } else if (set.type === QTYPE.NS && set.name !== zone.apex) {
      // A referral: the NS set is the child's (unsigned); the DS set, or proof that there is none.
      authority.push(set);
      const ds = typeSet(zone.nodes.get(set.name) ?? [], QTYPE.DS);
      if (ds && ds.rdata.length > 0) signer.signed(authority, zone, ds);
      else signer.nsec(authority, zone, set.name, successor(set.name), [QTYPE.NS, RRSIG_TYPE, NSEC_TYPE]);
    } else {
      signer.signed(authority, zone, set);
    }
  }

  // RFC 4035 §3.1.3.3: a wildcard answer proves that the name asked for does not exist: an NSEC
  // from just before it to just after it (a sibling, so the closest encloser is the wildcard's).
  for (const { zone, name } of synthesised) {
    const before = predecessor(name);
    const dot = name.indexOf('.');
    const first = name.slice(0, dot);
    if (!before || first.length >= 63) continue;
    signer.nsec(authority, zone, before, `${first}\u0000${name.slice(dot)}`, [RRSIG_TYPE, NSEC_TYPE]);
  }

  spec.answer = answer;
  spec.authority = authority;
  return signer.validity.endsMs;
}
