// Who reads each of a domain's settings, declared once: the name servers (their answers are built
// from it: ../dns/zone/build.ts) and/or the edges (routing, TLS, the protections). A change of a
// setting reaches exactly its readers: the feeds leave out the others (and a name server's serial
// stays when no setting of theirs changed). The record type below names every setting, so a new
// one cannot be added without saying who reads it; test/sync/setting-readers.test.ts checks the
// schema against it, and test/sync/name-server-settings.test.ts that the name servers' part is
// exactly what changes their answers.
import type { DomainSettings } from './domain.ts';

export type SettingReader = 'name servers' | 'edges';

/** Set by the service, not by the customer, but read like settings. */
type ServiceSet = 'ns_active' | 'failover_active' | 'claim' | 'signing';

export type SettingName = keyof DomainSettings | ServiceSet;

export const SETTING_READERS: Readonly<Record<SettingName, readonly SettingReader[]>> = {
  enabled: ['name servers', 'edges'],
  mask: ['name servers', 'edges'],
  ssl: ['edges'],
  tags: [],
  backend: ['name servers', 'edges'],
  failover: ['name servers', 'edges'],
  fhttps: ['edges'],
  cachelevel: ['edges'],
  sjschallenge: ['edges'],
  baseprotection: ['edges'],
  bwlimit: ['edges'],
  geomode: ['edges'],
  geolist: ['edges'],
  bind_node: ['name servers', 'edges'],
  cachelargefiles: ['edges'],
  waf_level: ['edges'],
  waf_mode: ['edges'],
  waf_exclusions: ['edges'],
  waf_body_limit: ['edges'],
  waf_body_overflow: ['edges'],
  waf_graphql: ['edges'],
  // DNSSEC is the name servers' alone (its keys never go to edges); the algorithm only matters
  // when a key is made, which the API does.
  dnssec: ['name servers'],
  dnssec_algorithm: [],
  signing: ['name servers'],
  ns_active: ['name servers'],
  failover_active: ['name servers', 'edges'],
  claim: ['name servers', 'edges'],
};

const readBy = (reader: SettingReader, read: boolean): ReadonlySet<string> =>
  new Set(Object.entries(SETTING_READERS).flatMap(([name, readers]) => (readers.includes(reader) === read ? [name] : [])));

/** The settings a name server's answers depend on: a change of any other reaches no name server. */
export const NAME_SERVER_SETTINGS: ReadonlySet<string> = readBy('name servers', true);

/** Settings no edge acts on (it serves a domain whatever its name servers): a change of these alone reaches no edge. */
export const NOT_EDGE_SETTINGS: ReadonlySet<string> = readBy('edges', false);

/**
 * Settings that reach their readers only: the domain others receive leaves them out (the DNSSEC
 * private keys). Every other setting travels in the domain document to every consumer.
 */
const ONLY_TO_READERS: readonly SettingName[] = ['signing'];

/** The fields of a domain an edge never receives (../sync/edge-feed-format.ts: edgeDomain). */
export const WITHHELD_FROM_EDGES: readonly SettingName[] = ONLY_TO_READERS.filter((name) => !SETTING_READERS[name].includes('edges'));
