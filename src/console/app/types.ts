// The API's resources as the console reads them (see /openapi.json for every field's meaning).
export interface Domain {
  domain: string;
  enabled: boolean;
  mask: string;
  ssl: boolean;
  tags: string[];
  backend: string;
  failover: string | null;
  fhttps: boolean;
  cachelevel: number;
  sjschallenge: boolean;
  baseprotection: boolean;
  bwlimit: number;
  geomode: 0 | 1 | 2;
  geolist: string[];
  bind_node: number[];
  cachelargefiles: boolean;
  waf_level: number;
  waf_mode: 'block' | 'log';
  waf_exclusions: Array<{ rule: number; path?: string; param?: string }>;
  waf_body_limit: number;
  waf_body_overflow: 'auto' | 'refuse' | 'prefix';
  /** Sign the zone's answers; GET /domains/{domain}/dnssec gives the DS. */
  dnssec: boolean;
  dnssec_algorithm: 13 | 15;
  waf_graphql: 'off' | 'block';
  ns_active: boolean;
  failover_active: boolean;
  nameservers: string[];
  verification: {
    state: 'pending' | 'verified';
    token: string | null;
    method: string | null;
    seen: { at: string; nameservers: string[]; delegation: boolean; token: boolean; note?: string } | null;
    next_check: string | null;
    /** What proves a pending claim: `["txt"]` alone when a delegation cannot (another account's claim has the same name servers). */
    accepts: Array<'delegation' | 'txt'>;
    /** What to do to prove a pending claim, in plain words. */
    instructions: string | null;
  };
  records: number;
  revision: number;
}

export interface DnsRecord {
  id: number;
  name: string;
  type: number;
  type_name: string;
  value: string;
  ttl: number;
  priority: number | null;
  target: number[];
}

export interface GeoTarget {
  id: number;
  kind: 'country' | 'continent';
  code: string;
  name: string;
}

export interface EdgeNode {
  id: number;
  name: string;
  location: string;
  status: string;
}

export interface IpList {
  id: number;
  name: string;
  ips: string[];
  allnodes: boolean;
  nodes: number[];
}

export interface Task {
  id: string;
  domain: string;
  names: string[];
  reason: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  challenge: string | null;
  attempts: number;
  next_attempt: string | null;
  error: string | null;
  problems: Array<{ name: string; type: string; detail: string }>;
  certificate: { fingerprint: string; not_before: string; not_after: string } | null;
  updated: string;
}

export interface PalisadeEvent {
  id: string;
  type: string;
  domain: string | null;
  created: string;
  data: Record<string, unknown>;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  created: string;
  secret?: string;
}

export interface Delivery {
  id: string;
  event: PalisadeEvent;
  state: 'pending' | 'delivered' | 'failed';
  attempts: Array<{ at: string; status?: number; error?: string; ms: number }>;
  next_attempt: string | null;
}

export interface Figures {
  availability: number | null;
  checks: number;
  checks_failed: number;
  requests: number;
  requests_failed: number;
  response_ms: { p50: number | null; p95: number | null; p99: number | null };
}

export interface UptimePeriod extends Figures {
  start: string;
  nodes: Record<string, Figures>;
}

export interface UptimeSeries {
  resolution: string;
  from: string;
  summary: Figures & { nodes: Record<string, Figures> };
  periods: UptimePeriod[];
}

export interface Uptime {
  domain: string;
  state: 'up' | 'down' | 'failover' | 'unknown';
  since: string | null;
  flapping: boolean;
  nodes: Record<string, { state: string; since: string }>;
  minute: UptimeSeries;
  hour: UptimeSeries;
  day: UptimeSeries;
}

export const RECORD_TYPES = [
  'A',
  'AAAA',
  'CNAME',
  'MX',
  'NS',
  'TXT',
  'SOA',
  'SRV',
  'CAA',
  'PTR',
  'TLSA',
  'SSHFP',
  'NAPTR',
  'DS',
  'SVCB',
  'HTTPS',
] as const;

export const EVENT_TYPES = [
  'backend.down',
  'backend.recovered',
  'failover.engaged',
  'failover.released',
  'backend.flapping',
  'certificate.failed',
  'certificate.expiring',
  'domain.unserved',
  'domain.served',
  'delegation.missing',
  'delegation.ok',
  'domain.verified',
  'domain.claim_released',
  'domain.verification_lost',
  'domain.claim_shared',
  'webhook.test',
] as const;

/** GET /domains/{domain}/dnssec. */
export interface DnssecStatus {
  state: string;
  algorithm: number;
  keys: Array<{ key_tag: number; flags: number; algorithm: number; dnskey: string; ds: string; role: 'published' | 'active' | 'retiring' }>;
  /** What the customer does next, in plain words (the API's, for every state). */
  next_step: string;
  /** A key rollover under way: the DS records to add and remove at the registrar. */
  rollover: { phase: 'publish' | 'retire'; waiting_for: string[]; ds_to_add: string[]; ds_to_remove: string[] } | null;
}
