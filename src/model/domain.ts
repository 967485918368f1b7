// The Domain resource: its schemas (create, patch, response), defaults and the rules a
// value must pass beyond its JSON type.
import { Type, type Static } from 'typebox';
import { countryByIsoCode } from './geo-targets.ts';
import type { FieldError } from '../errors.ts';
import { BackendText, EXPECTED, NodeIds, Nullable, Revision, Timestamp } from './common.ts';
import { checkBackend } from './backend.ts';
import { normaliseDomainName, normaliseOwnerName } from './names.ts';
import type { ZoneSigning } from './dnssec.ts';
import { NAME_SERVER_SETTINGS } from './domain-readers.ts';

const settings = {
  enabled: Type.Boolean({ description: 'Protection on: protected names resolve to the edge nodes. Off: DNS only.' }),
  mask: Type.String({
    maxLength: 1024,
    description:
      'Names under the domain protected besides the domain itself: comma- or space-separated relative names ("www, shop"), "*" for every name. Default "www".',
  }),
  ssl: Type.Boolean({ description: 'Serve HTTPS at the edge with a certificate issued by the service' }),
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\x00-\\x1f\\x7f]+$', [EXPECTED]: 'a tag of 1–64 characters without control characters' }), { maxItems: 32 }),
  backend: BackendText,
  failover: Nullable(BackendText, { description: 'Backend used when `backend` is down; null for none' }),
  fhttps: Type.Boolean({ description: 'Redirect HTTP to HTTPS at the edge' }),
  cachelevel: Type.Integer({ minimum: 0, maximum: 3, description: '0 = no caching … 3 = aggressive' }),
  sjschallenge: Type.Boolean({ description: 'JavaScript challenge for new visitors' }),
  baseprotection: Type.Boolean({ description: 'Baseline L7 protection rules' }),
  bwlimit: Type.Integer({ minimum: 0, maximum: 100_000_000, description: 'Bandwidth limit in KB/s; 0 = unlimited' }),
  geomode: Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)], {
    description: '0 = no geo filter, 1 = allow only `geolist` countries, 2 = block `geolist` countries',
  }),
  geolist: Type.Array(Type.String({ pattern: '^[A-Za-z]{2}$', [EXPECTED]: 'a two-letter ISO 3166-1 country code ("DE", "us")' }), {
    maxItems: 250,
    description: 'ISO 3166-1 alpha-2 codes',
    [EXPECTED]: 'a list of two-letter ISO 3166-1 country codes, ["DE", "FR"]',
  }),
  bind_node: NodeIds,
  cachelargefiles: Type.Boolean(),
  waf_level: Type.Integer({ minimum: 1, maximum: 4, description: 'baseprotection sensitivity: 1 (default) fewest false positives; 2 adds looser shapes, any single word read as possible base64, and code quoted in prose; 3 and 4 stricter still' }),
  waf_mode: Type.Union([Type.Literal('block'), Type.Literal('log')], { description: '`block`: refuse with 403 naming a reference; `log`: only log what would be refused' }),
  waf_exclusions: Type.Array(
    Type.Object(
      {
        rule: Type.Integer({ minimum: 900000, maximum: 999999, description: 'The rule id (as the log line names it)' }),
        path: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^/', description: 'Only for request paths starting with this' })),
        param: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only for this query, form, JSON or cookie parameter' })),
      },
      { additionalProperties: false },
    ),
    {
      maxItems: 100,
      description: 'baseprotection rules not applied, optionally only under a path prefix or to one parameter',
      [EXPECTED]: 'a list of exclusions, each {"rule": 942100, "path": "/search", "param": "q"} (path and param optional), or [] for none',
    },
  ),
  waf_body_limit: Type.Integer({ minimum: 64, maximum: 16384, description: 'KiB of a request body baseprotection reads and inspects (1024)' }),
  waf_body_overflow: Type.Union([Type.Literal('auto'), Type.Literal('refuse'), Type.Literal('prefix')], {
    description: 'Past `waf_body_limit`: `refuse` (413), `prefix` (inspect the first `waf_body_limit` KiB, pass the rest uninspected), `auto` (default: prefix for uploads — multipart and binary types —, refuse for the rest)',
  }),
  dnssec: Type.Boolean({
    description:
      'Sign the zone\'s answers (DNSSEC, on line, geo answers included). Turning it on makes the zone\'s signing key (kept sealed, never shown); GET /domains/{domain}/dnssec gives the DS to publish at the registrar. Turning it off keeps the zone signed (state `unsigning`, publishing the CDS/CDNSKEY delete signal) until the parent zone holds no DS for it and the TTL of the last one seen there is over; then signing stops. Remove the DS at the registrar. The key is kept, so turning it on again brings back the same DS.',
  }),
  dnssec_algorithm: Type.Union([Type.Literal(13), Type.Literal(15)], {
    description:
      'The signing key\'s algorithm: 13 ECDSA P-256 with SHA-256 (default), 15 Ed25519. Fixed per key, at its making: it cannot change while `dnssec` is on (no algorithm rollover in this release); changed while off, the next turning on makes a new key (a new DS).',
    [EXPECTED]: '13 (ECDSA P-256/SHA-256) or 15 (Ed25519)',
  }),
  waf_graphql: Type.Union([Type.Literal('off'), Type.Literal('block')], {
    description: 'GraphQL requests (a JSON body\'s `query`, a batch of them, a `query` parameter, an `application/graphql` body): `block` refuses introspection (`__schema`, `__type`; `__typename` passes) and floods of one request into many (more than 50 aliases in a document, more than 10 operations in a batch), rules 934200 and 934210; `off` (default) leaves them to the other rules',
  }),
};

export const DOMAIN_DEFAULTS = {
  enabled: true,
  mask: 'www',
  ssl: false,
  tags: [] as string[],
  failover: null as string | null,
  fhttps: false,
  cachelevel: 0,
  sjschallenge: false,
  baseprotection: true,
  bwlimit: 0,
  geomode: 0 as 0 | 1 | 2,
  geolist: [] as string[],
  bind_node: [] as number[],
  cachelargefiles: false,
  waf_level: 1,
  waf_mode: 'block' as 'block' | 'log',
  waf_exclusions: [] as Array<{ rule: number; path?: string; param?: string }>,
  waf_body_limit: 1024,
  waf_body_overflow: 'auto' as 'auto' | 'refuse' | 'prefix',
  dnssec: false,
  dnssec_algorithm: 13 as 13 | 15,
  waf_graphql: 'off' as 'off' | 'block',
};

const optional = <T extends Record<string, import('typebox').TSchema>>(props: T) =>
  Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof T]: import('typebox').TOptional<T[K]>;
  };

export const DomainCreate = Type.Object(
  {
    domain: Type.String({ minLength: 1, maxLength: 253, description: 'The domain; IDNs are converted to punycode' }),
    ...optional(settings),
    backend: settings.backend,
  },
  { additionalProperties: false },
);
export type DomainCreate = Static<typeof DomainCreate>;

export const DomainPatch = Type.Object(optional(settings), { additionalProperties: false });
export type DomainPatch = Static<typeof DomainPatch>;

export const DomainSettings = Type.Object(settings);
export type DomainSettings = Static<typeof DomainSettings>;

/** What the service last saw of a claim's evidence (through PALISADE_DELEGATION_RESOLVER, or the parent zone served here). */
export const VerificationSeen = Type.Object({
  at: Timestamp,
  nameservers: Type.Array(Type.String(), { description: 'The NS set seen for the domain' }),
  txt: Type.Array(Type.String(), { description: 'The TXT strings seen at _palisade-verify.<domain>' }),
  delegation: Type.Boolean({ description: 'The NS set delegates to this claim\'s name-server pair, and that counts for it (see `accepts`; a delegation another account\'s claim of the name would have as well counts for neither)' }),
  token: Type.Boolean({ description: 'The TXT holds this claim\'s token' }),
  from: Type.Union([Type.Literal('resolver'), Type.Literal('parent')], { description: '`parent`: read in the parent zone another account has proven here (only its owner can add the delegation or token)' }),
  note: Type.Optional(Type.String({ description: 'Why evidence seen did not prove the claim, or why nothing could be seen' })),
});

export const Verification = Type.Object(
  {
    state: Type.Union([Type.Literal('pending'), Type.Literal('verified')], {
      description: '`pending`: a claim only — our name servers do not answer for it, the edge does not route it, no certificate is ordered. `verified`: proven.',
    }),
    token: Nullable(Type.String(), { description: 'Prove the claim by a TXT record at `_palisade-verify.<domain>` holding this text (or, when `accepts` says so, delegate the domain to `nameservers`); null for a domain registered before claims existed' }),
    method: Nullable(Type.String(), { description: 'How it was proven: delegation, token, parent (under your own proven zone), operator, unchecked (PALISADE_OWNERSHIP_PROOF=off), migrated (registered before claims existed)' }),
    verified_at: Nullable(Timestamp),
    seen: Type.Union([VerificationSeen, Type.Null()]),
    next_check: Nullable(Timestamp, { description: 'When the service looks again by itself (pending claims are looked at less and less often; POST /domains/{domain}/verify looks now)' }),
    accepts: Type.Array(Type.Union([Type.Literal('delegation'), Type.Literal('txt')]), {
      description:
        'What proves the claim: `delegation` (the parent zone delegating the domain to `nameservers`) and `txt` (the token at `_palisade-verify.<domain>`). `["txt"]` alone when a delegation cannot tell this claim from another account\'s (both were given the same pair) or the name was delegated to every pair for another account before: then only the token proves it.',
    }),
    instructions: Nullable(Type.String(), { description: 'What to do to prove a pending claim, in plain words; null once proven' }),
  },
  { description: 'Whether the domain is proven to be yours' },
);
export type VerificationSeen = Static<typeof VerificationSeen>;

export const Domain = Type.Object({
  domain: Type.String(),
  ...settings,
  ns_active: Type.Boolean({ description: 'Our name servers answer for the domain (activatens / deactivatens)' }),
  failover_active: Type.Boolean({
    description: 'Set by the service, read only: a DNS-only domain whose backend the edges see down answers with `failover` (short TTL) until it recovers',
  }),
  nameservers: Type.Array(Type.String(), { description: 'The name servers to delegate the domain to (the pair assigned to this claim). Whether a delegation to them proves a pending claim: `verification.accepts`' }),
  verification: Verification,
  records: Type.Integer({ description: 'Number of DNS records' }),
  created: Timestamp,
  updated: Timestamp,
  revision: Revision,
}, { examples: [{ domain: 'example.org', enabled: true, mask: 'www', ssl: false, tags: ['prod'], backend: '198.51.100.1', failover: null, fhttps: false, cachelevel: 0, sjschallenge: false, baseprotection: true, bwlimit: 0, geomode: 0, geolist: [], bind_node: [], cachelargefiles: false, waf_level: 1, waf_mode: 'block', waf_exclusions: [{ rule: 942100, path: '/search', param: 'q' }], waf_body_limit: 1024, waf_body_overflow: 'auto', waf_graphql: 'off', dnssec: true, dnssec_algorithm: 13, ns_active: true, failover_active: false, nameservers: ['ns1.palisade.example.net', 'ns2.palisade.example.net'], verification: { state: 'verified', token: 'palisade-verify=3f0c9a7e51b24d6c8e1f0a2b3c4d5e6f', method: 'delegation', verified_at: '2026-11-23T09:05:00.000Z', seen: { at: '2026-11-23T09:05:00.000Z', nameservers: ['ns1.palisade.example.net', 'ns2.palisade.example.net'], txt: [], delegation: true, token: false, from: 'resolver' }, next_check: null, accepts: ['delegation', 'txt'], instructions: null }, records: 3, created: '2026-11-23T09:00:00.000Z', updated: '2026-11-23T09:00:00.000Z', revision: 42 }] });

/** Settings added after domains were first stored: a stored domain may lack them (the defaults apply). */
type LaterSettings = 'waf_level' | 'waf_mode' | 'waf_exclusions' | 'waf_body_limit' | 'waf_body_overflow' | 'waf_graphql' | 'dnssec' | 'dnssec_algorithm';

/**
 * A domain's claim: how its account proves the name is theirs. Absent on a domain stored before
 * claims existed (proven, delegated to the service's default pair).
 */
export interface ClaimState {
  /** false while unproven: name servers, edges and certificates treat the domain as not there. */
  verified: boolean;
  /** The TXT text at _palisade-verify.<domain> that proves the claim. */
  token: string;
  /** The name servers a delegation must name to prove it (the account's pair, or another when the name was delegated to that pair for another account). */
  nameservers: [string, string];
  /**
   * A delegation cannot prove it, only the token can: every pair of the pool was once this name's
   * for another account, or another account's claim of the name has the same pair (`shared`).
   */
  noDelegation?: boolean;
  /** Another account's claim of the name was given the same pair: a delegation cannot tell them apart (issue 37). Kept once set. */
  shared?: boolean;
  /** How and when it was proven. */
  method?: 'delegation' | 'token' | 'parent' | 'operator' | 'unchecked';
  at?: string;
}

/** Proven: served, routed, certified. A domain stored before claims existed is. */
export const isProven = (domain: Pick<DomainState, 'claim'>): boolean => domain.claim?.verified !== false;

/** What the store keeps of a domain (the response adds `nameservers` and `records`). */
export interface DomainState extends Omit<DomainSettings, LaterSettings>, Partial<Pick<DomainSettings, LaterSettings>> {
  domain: string;
  ownerId: number;
  ns_active: boolean;
  /** DNS only with a failover: the backend is down (by the edges' checks), so names answer `failover`. Absent = false. */
  failover_active?: boolean;
  /** The claim and its proof; absent = stored before claims existed (proven). */
  claim?: ClaimState;
  /**
   * The zone's DNSSEC signing keys, made when `dnssec` was first turned on and kept when it is
   * turned off. In the store each `private_key` is sealed with the operator key; the name
   * servers' feed carries them opened, and only while `dnssec` is on (../sync/name-server-domain.ts);
   * edges and API answers never see them.
   */
  signing?: ZoneSigning;
  created: string;
  updated: string;
  revision: number;
  /**
   * Kept by the store: the revision of the domain's last change that name servers answer from
   * (records, or a setting in NAME_SERVER_SETTINGS), when later changes touched only other
   * settings; absent when that is `revision`. Their serial comes from it (servedRevision), so a
   * change of tags leaves every name server's serial as it was, whether loaded or fed.
   */
  nsRevision?: number;
}

// Who reads each setting (name servers, edges) is declared once, in domain-readers.ts.
export { NAME_SERVER_SETTINGS, NOT_EDGE_SETTINGS } from './domain-readers.ts';

/** Fields about the document itself, not settings. */
const BOOKKEEPING: ReadonlySet<string> = new Set(['created', 'updated', 'revision', 'nsRevision']);

/** The names of the settings that differ between two states of a domain, sorted. */
export function changedSettings(before: DomainState, after: DomainState): string[] {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  const out: string[] = [];
  for (const field of fields) {
    if (BOOKKEEPING.has(field)) continue;
    const a = (before as unknown as Record<string, unknown>)[field];
    const b = (after as unknown as Record<string, unknown>)[field];
    if (a !== b && JSON.stringify(a) !== JSON.stringify(b)) out.push(field);
  }
  return out.sort();
}

/** The revision a name server's serial for the domain comes from (see DomainState.nsRevision). */
export const servedRevision = (domain: DomainState): number => domain.nsRevision ?? domain.revision;

/**
 * A settings change as the store records it: the settings changed (for the change entry), and
 * `after` with nsRevision kept at the last change name servers use (`before`'s, when none of
 * these settings is one they use; absent otherwise).
 */
export function settingsChange(before: DomainState, after: DomainState): { settings: string[]; domain: DomainState } {
  const settings = changedSettings(before, after);
  const { nsRevision: _n, ...domain } = after;
  return { settings, domain: settings.some((s) => NAME_SERVER_SETTINGS.has(s)) ? domain : { ...domain, nsRevision: servedRevision(before) } };
}

/** The domain as a change of records leaves it (name servers answer from records). */
export function withoutNsRevision(domain: DomainState): DomainState {
  const { nsRevision: _n, ...rest } = domain;
  return rest;
}

/**
 * A consumer's copy of the domain after a change of records at `revision` is applied to it: that
 * is the revision name servers answer from now — unless the copy was read after the change (a
 * feed sends documents as they are when it is read), and so counts it already.
 */
export function afterRecords(domain: DomainState, revision: number): DomainState {
  return revision >= domain.revision ? { ...withoutNsRevision(domain), revision } : domain;
}

/**
 * A domain's settings as read (`head`) applied over a consumer's copy that may have taken changes
 * of records since (`held`): the settings are head's, the revision the later of the two.
 */
export function headOver(head: DomainState, held: DomainState | undefined): DomainState {
  if (!held || held.revision <= head.revision) return head;
  const { nsRevision: _n, ...rest } = head;
  return held.nsRevision === undefined ? { ...rest, revision: held.revision } : { ...rest, revision: held.revision, nsRevision: held.nsRevision };
}

/** Checks and canonicalises the fields of a create or patch body that JSON Schema cannot. */
export function checkDomainSettings(input: Partial<DomainSettings>, errors: FieldError[], zone: string, allowPrivateBackends = false): Partial<DomainSettings> {
  const out: Partial<DomainSettings> = { ...input };
  for (const field of ['backend', 'failover'] as const) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    const checked = checkBackend(value, allowPrivateBackends);
    if (checked.ok) out[field] = checked.value;
    else errors.push({ field, message: checked.message });
  }
  if (input.geolist) {
    const codes = input.geolist.map((c) => c.toUpperCase());
    codes.forEach((code, i) => {
      if (!countryByIsoCode(code)) errors.push({ field: `geolist.${i}`, message: `"${code}" is not an ISO 3166-1 alpha-2 country code` });
    });
    out.geolist = [...new Set(codes)].sort();
  }
  if (input.tags) out.tags = [...new Set(input.tags)];
  if (input.bind_node) out.bind_node = [...new Set(input.bind_node)].sort((a, b) => a - b);
  if (input.mask !== undefined) {
    const mask = canonicalMask(input.mask, zone);
    if ('error' in mask) errors.push({ field: 'mask', message: mask.error });
    else out.mask = mask.value;
  }
  return out;
}

/** "www, Shop.example.org *" → "*,shop,www": relative names, sorted, deduplicated. */
export function canonicalMask(mask: string, zone: string): { value: string } | { error: string } {
  const entries = mask.split(/[\s,]+/).filter((e) => e !== '');
  const names = new Set<string>();
  for (const entry of entries) {
    const name = normaliseOwnerName(entry, zone);
    if (!name.ok) return { error: `"${entry}" ${name.message}` };
    names.add(name.value);
  }
  return { value: [...names].sort().join(',') };
}

export function checkDomainName(input: string, errors: FieldError[]): string {
  const name = normaliseDomainName(input);
  if (!name.ok) {
    errors.push({ field: 'domain', message: `"${input}" ${name.message}` });
    return input;
  }
  return name.value;
}
