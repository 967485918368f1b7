// The `palisade` command: one package, several roles (serve, api, admin …).
import { ConfigError, loadConfig, ROLES, settingsHelp, type Role } from './config.ts';
import { StartupError } from './roles/startup-error.ts';
// Each role loads only its own modules: an operator command must not pay for the proxy, the
// name server and the API's schemas at every start (that doubled its start-up time).

const IN_SERVE = '--in-serve';

const USAGE = `usage: palisade <role>
  serve    API, DNS and an edge on the embedded store, each a process under one supervisor (default)
  api      the control-plane API only
  dns      a name server fed by a remote API (PALISADE_SYNC_URL, _TOKEN, _SECRET)
  edge     an edge node's reverse proxy fed by a remote API (PALISADE_EDGE_NODE, PALISADE_SYNC_URL, _TOKEN, _SECRET)
  admin    operator commands (palisade admin --help)

Configuration comes from the environment (the README's "Configuration"); palisade <role> --help
lists one role's settings.`;

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';

async function main(argv: string[]): Promise<number> {
  const [role = 'serve', ...rest] = argv;
  if (isHelp(role)) {
    console.log(`${USAGE}\n\n${settingsHelp()}`);
    return 0;
  }
  if (role !== 'admin' && (ROLES as readonly string[]).includes(role) && isHelp(rest[0])) {
    console.log(`usage: palisade ${role}\n\n${settingsHelp(role as Role)}`);
    return 0;
  }
  const config = loadConfig();
  // Before any connection: the roles fed by a remote API trust its private CA (a no-op when unset).
  if (config.sync.caPem) {
    try {
      (await import('./roles/feed-ca.ts')).trustFeedCa(config.sync.caPem);
    } catch (error) {
      throw new ConfigError([(error as Error).message]);
    }
  }
  switch (role) {
    case 'serve':
      await (await import('./roles/serve.ts')).serve(config);
      return -1; // keeps running
    // `--in-serve`: a part of serve, started by its supervisor (fed from the store on this host).
    case 'api':
      await (await import('./roles/parts/api-part.ts')).runApiPart(config, rest.includes(IN_SERVE));
      return -1; // keeps running
    case 'dns':
      if (rest.includes(IN_SERVE)) await (await import('./roles/parts/dns-part.ts')).runDnsPart(config);
      else await (await import('./roles/dns.ts')).runNameServer(config);
      return -1; // keeps running
    case 'edge':
      if (rest.includes(IN_SERVE)) await (await import('./roles/parts/edge-part.ts')).runEdgePart(config);
      else await (await import('./roles/edge.ts')).runEdge(config);
      return -1; // keeps running
    case 'admin': {
      const { ADMIN_USAGE, describeAdminError, runAdmin } = await import('./cli/admin.ts');
      const { openStore } = await import('./store/index.ts');
      if (rest.length === 0 || rest[0] === '--help') {
        console.log(ADMIN_USAGE);
        return rest.length === 0 ? 2 : 0;
      }
      const store = openStore({ dataDir: config.dataDir, changeRetention: config.changeRetention, redisPrefix: config.redisPrefix, redis: config.redis });
      try {
        await runAdmin(store, rest, (value) => console.log(JSON.stringify(value, null, 2)), { secretKey: config.certs.secretKey, config });
        return 0;
      } catch (error) {
        console.error(`palisade admin: ${describeAdminError(error)}`);
        return 2;
      } finally {
        await store.close();
      }
    }
    default:
      console.error(`palisade: unknown role "${role}"\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof ConfigError || error instanceof StartupError ? `palisade: ${error.message}` : error);
    // Listeners or timers may have started before the failure: leave now.
    process.exit(1);
  },
);
