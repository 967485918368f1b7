// The configuration's entry: declared and read in config/ (one file per part; config/README.md).
export { ConfigError, loadConfig } from './config/load.ts';
export { DNS_RRL_DEFAULTS } from './config/dns.ts';
export type { ApiRateLimits, CertConfig, Config, NotifyConfig, OwnershipConfig } from './config/types.ts';
export { settingsHelp } from './config/docs.ts';
export { ROLES, type Role } from './config/groups.ts';
