// What the serve and dns roles build alike: the GeoIP locator and the DNS server from the config.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { join } from 'node:path';
import { DnsServer, type DnsServerOptions } from '../dns/dns-server.ts';
import { notifySources } from '../dns/transfer/notify-source.ts';
import { SECONDARIES_FILE } from '../dns/transfer/secondaries.ts';
import { BUNDLED_GEOIP_DB } from '../geo/default-db.ts';
import { GeoLocator } from '../geo/locator.ts';

/** Opens (and watches) the GeoIP database if one is configured; says so either way (unless `quiet`: a DNS worker). */
export function openGeo(config: Config, log: Logger, quiet = false): GeoLocator | undefined {
  const geo = config.geoipDb ? GeoLocator.open(config.geoipDb, log.child({ component: 'geo' })) : undefined;
  geo?.watch();
  if (quiet) return geo;
  if (geo) {
    const bundled = config.geoipDb === BUNDLED_GEOIP_DB;
    log.info(
      { path: config.geoipDb, type: geo.databaseType, built: geo.builtOn },
      bundled ? 'geo: bundled GeoIP database loaded (IPFire Location data, CC BY-SA 4.0; set PALISADE_GEOIP_DB for your own)' : 'geo: GeoIP database loaded',
    );
  } else log.warn('geo: no GeoIP database (PALISADE_GEOIP_DB=off): geo-targeted records answer with their general variant');
  return geo;
}

/** `overrides`: what the DNS workers of one name server share (port, cookie secret) and split (rate limit, TCP bounds). */
export function newDnsServer(
  config: Config,
  log: Logger,
  geo: GeoLocator | undefined,
  overrides: Partial<Pick<DnsServerOptions, 'port' | 'cookieSecret' | 'rateLimit' | 'tcp' | 'reusePort'>> = {},
  /** Whether this process sends NOTIFY to the secondaries: a name server's one primary process. */
  notify = true,
  /** A DNS worker answering from the stored state: its answer cache holds zones weakly (see dns/cache/answer-cache.ts). */
  cacheWeakZones = false,
): DnsServer {
  return new DnsServer({
    host: config.dns.host,
    port: config.dns.port,
    nameservers: config.nameservers,
    hostmaster: config.hostmaster,
    tcp: config.dns.tcp,
    handler: { cache: config.dns.cache, signatureCache: config.dns.signatureCache, locate: geo && ((address: string) => geo.locate(address)), nsid: config.dns.nsid ? Buffer.from(config.dns.nsid, 'latin1') : undefined, cacheWeakZones },
    // Unset: a random secret per process (cookies then hold for this server only, as they do for
    // any server with its own address; anycast instances must share one).
    cookieSecret: config.dns.cookieSecret ?? randomBytes(16),
    rateLimit: config.dns.rateLimit,
    // Every process answers transfers from its own index; the secondaries are the data directory's.
    transfers: { secondariesFile: join(config.dataDir, SECONDARIES_FILE), catalog: config.dns.catalogZone || undefined, notify, journal: config.dns.ixfrJournal, notifySources: notifySources(config.dns.host, config.dns.notifySource), perSecondary: config.dns.transfersPerSecondary },
    log: log.child({ component: 'dns' }),
    ...overrides,
  });
}
