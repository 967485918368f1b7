// Environment → typed, validated configuration. Every wrong value is reported at once with the
// variable's name, so an operator fixes them all in one go. Each part reads its own settings (api.ts,
// dns.ts…); the checks across parts are here.
import { apiConfig } from './api.ts';
import { certConfig } from './certs.ts';
import { dnsConfig } from './dns.ts';
import { edgeConfig } from './edge.ts';
import { geoConfig } from './geo.ts';
import { loggingConfig } from './logging.ts';
import { notifyConfig } from './notify.ts';
import { nameConfig, ownershipConfig } from './ownership.ts';
import { storeConfig } from './store.ts';
import { syncConfig } from './sync.ts';
import type { Config } from './types.ts';

/** Every problem found, one line each, starting with the variable's name. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const store = storeConfig(env, problems);
  const names = nameConfig(env, problems);
  const config: Config = {
    ...store,
    ...geoConfig(env, problems),
    ...syncConfig(env, problems),
    ...apiConfig(env, problems),
    ...dnsConfig(env, problems),
    ...names,
    ...ownershipConfig(env, names, problems),
    ...edgeConfig(env, store.dataDir, problems),
    ...notifyConfig(env, problems),
    ...certConfig(env, problems),
    ...loggingConfig(env, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
