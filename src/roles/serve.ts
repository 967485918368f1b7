// The all-in-one role: the API (and, as they arrive, the DNS server and edge) in one process on
// the embedded store. Shuts down cleanly on SIGTERM/SIGINT: stops accepting, finishes requests,
// closes the store.
import type { Config } from '../config.ts';
import { buildApp } from '../api/app.ts';
import { createLogger } from '../log.ts';
import { openStore } from '../store/index.ts';

export async function serve(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const store = openStore({ dataDir: config.dataDir, changeRetention: config.changeRetention });
  const app = await buildApp({ store, config, logger: log.child({ component: 'api' }) });
  await app.listen({ host: config.api.host, port: config.api.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.api.port;
  log.info({ dataDir: config.dataDir, store: store.kind, api: `http://${config.api.host}:${port}` }, 'palisade serving');
  if ((await store.listUsers()).length === 0) {
    log.info('no users yet: create one with `npm run admin -- user create --name NAME --email EMAIL`; it prints an API key for X-Auth-Key');
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    try {
      await app.close();
      await store.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
