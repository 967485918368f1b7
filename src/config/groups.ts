// Every setting, by part, with the roles that read it: what the README's settings table and
// `palisade --help` are generated from (docs.ts).
import { API_SETTINGS } from './api.ts';
import { CERT_SETTINGS } from './certs.ts';
import { DNS_SETTINGS, DNS_WORKER_SETTINGS } from './dns.ts';
import { EDGE_SETTINGS } from './edge.ts';
import { GEO_SETTINGS } from './geo.ts';
import type { SettingTable } from './kinds.ts';
import { LOGGING_SETTINGS } from './logging.ts';
import { NOTIFY_SETTINGS } from './notify.ts';
import { NAME_SETTINGS, OWNERSHIP_SETTINGS } from './ownership.ts';
import { SENTINEL_TLS_SETTINGS, STORE_SETTINGS } from './store.ts';
import { SYNC_SETTINGS } from './sync.ts';

export const ROLES = ['serve', 'api', 'dns', 'edge', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface SettingGroup {
  title: string;
  roles: readonly Role[];
  settings: SettingTable;
}

export const SETTING_GROUPS: readonly SettingGroup[] = [
  { title: 'Store', roles: ['serve', 'api', 'admin'], settings: { ...STORE_SETTINGS, ...SENTINEL_TLS_SETTINGS } },
  { title: 'Logging', roles: ['serve', 'api', 'dns', 'edge'], settings: LOGGING_SETTINGS },
  { title: 'API', roles: ['serve', 'api'], settings: API_SETTINGS },
  { title: 'Names', roles: ['serve', 'api', 'dns'], settings: NAME_SETTINGS },
  { title: 'Domain ownership', roles: ['serve', 'api'], settings: OWNERSHIP_SETTINGS },
  { title: 'Certificates', roles: ['serve', 'api', 'admin'], settings: CERT_SETTINGS },
  { title: 'Notifications and monitoring', roles: ['serve', 'api'], settings: NOTIFY_SETTINGS },
  { title: 'DNS', roles: ['serve', 'dns'], settings: { ...DNS_SETTINGS, ...DNS_WORKER_SETTINGS } },
  { title: 'Geo', roles: ['serve', 'dns', 'edge'], settings: GEO_SETTINGS },
  { title: 'Change feed (dns and edge roles)', roles: ['dns', 'edge'], settings: SYNC_SETTINGS },
  { title: 'Edge', roles: ['serve', 'edge'], settings: EDGE_SETTINGS },
];
