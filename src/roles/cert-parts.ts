// The certificate work of a process that runs the API (serve, api): the operator key checked,
// the task book the routes write, and the worker that issues.
import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { EventBook } from '../notify/event-book.ts';
import { CertWorker } from '../certs/cert-worker.ts';
import { prepareSecrets } from '../certs/key-check.ts';
import type { SecretBox } from '../certs/secret-box.ts';
import { TaskBook } from '../certs/task-book.ts';
import type { Store } from '../store/types.ts';
import { StartupError } from './startup-error.ts';

export async function openSecrets(store: Store, config: Config, log: Logger): Promise<SecretBox | undefined> {
  return prepareSecrets(store, config.certs, log).catch((error: Error) => {
    throw new StartupError(`certificates: ${error.message}`);
  });
}

const hostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * Where a DNS-01 TXT is confirmed: the configured name servers, else this process's own DNS
 * listener, else PALISADE_NS1/NS2 looked up, on port 53.
 */
async function checkNameservers(config: Config, ownDns: { host: string; port: number } | undefined, log: Logger): Promise<string[]> {
  if (config.certs.checkNameservers.length > 0) return config.certs.checkNameservers;
  if (ownDns) return [hostPort(ownDns.host, ownDns.port)];
  const found: string[] = [];
  for (const name of config.nameservers) {
    try {
      for (const { address } of await lookup(name, { all: true })) found.push(hostPort(address, 53));
    } catch (error) {
      log.warn({ nameserver: name, err: error }, 'certificates: a name server could not be looked up; set PALISADE_ACME_CHECK_NAMESERVERS');
    }
  }
  return found;
}

export async function startCertificates(
  store: Store,
  config: Config,
  secrets: SecretBox | undefined,
  log: Logger,
  own: { dns?: { host: string; port: number }; edgeHttpPort?: number },
  events?: EventBook,
): Promise<{ book: TaskBook; worker: CertWorker }> {
  const book = new TaskBook(store, config.certs.retryBaseMs);
  // Looked up when a DNS-01 order first needs them (a start never waits on a resolver).
  let found: Promise<string[]> | undefined;
  const nameservers = () => (found ??= checkNameservers(config, own.dns, log).then((list) => {
    if (list.length === 0) found = undefined;
    return list;
  }));
  const httpPort = config.certs.httpPort ?? own.edgeHttpPort ?? 80;
  const worker = new CertWorker({ store, book, config: config.certs, box: secrets, log, nameservers, httpPort, events });
  if (!config.certs.directoryUrl) log.info('certificates: no ACME CA configured (PALISADE_ACME_DIRECTORY); domains with ssl get a task that says so');
  return { book, worker };
}
