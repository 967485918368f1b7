// serve's name server, run as its own process (`palisade dns --in-serve`): the DNS server fed
// from the store on this host (a snapshot, then the change feed after each commit the API part
// announces, and by polling for the operator CLI's). A crash here leaves the API and the edge
// answering; the supervisor starts it again.
import type { Config } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { openStore } from '../../store/index.ts';
import { StoreFeed } from '../../sync/store-feed.ts';
import { SecretBox } from '../../certs/secret-box.ts';
import { nameServerDomain } from '../../sync/name-server-domain.ts';
import { newDnsServer, openGeo } from '../dns-parts.ts';
import { closeOnSignal } from '../shutdown.ts';
import { StartupError } from '../startup-error.ts';
import { PartChannel } from '../supervisor/part-channel.ts';

export async function runDnsPart(config: Config): Promise<void> {
  const channel = new PartChannel(true);
  const log = createLogger(config.logLevel).child({ part: 'dns' });
  const store = openStore({ dataDir: config.dataDir, changeRetention: config.changeRetention, redisPrefix: config.redisPrefix, redis: config.redis });
  const geo = openGeo(config, log);
  const dns = newDnsServer(config, log, geo);
  // Signed zones' keys are sealed in the store: this name server opens them with the operator key.
  const box = config.certs.secretKey ? new SecretBox(config.certs.secretKey) : undefined;
  const open = box && ((sealed: string) => box.open(sealed));
  const trouble = (domain: string, reason: string) => log.warn({ domain, reason }, 'dnssec: a signed zone\'s keys cannot be opened; it is served without keys (SERVFAIL rather than unsigned answers)');
  const feed = new StoreFeed(store, dns.index, log.child({ component: 'sync' }), undefined, (domain) => nameServerDomain(domain, open, trouble));
  dns.metrics.revisionApplied = () => feed.revision;
  await feed.start();
  // The API part committed: read past any snapshot this process still holds, then catch up.
  channel.on('committed', () => {
    store.committedElsewhere();
    void feed.catchUp();
  });
  channel.handle('metrics', () => dns.metrics.snapshot());
  const port = await dns.listen().catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`dns: cannot listen on ${config.dns.host}:${config.dns.port} (${error.code ?? error.message}); free the port or set PALISADE_DNS_HOST/PALISADE_DNS_PORT`);
  });
  channel.ready({ dns: port }, { zones: dns.index.size });

  closeOnSignal(log, async () => {
    feed.stop();
    dns.stopTransfers();
    await dns.close();
    geo?.close();
    await store.close();
  });
}
