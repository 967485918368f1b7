// The dns and edge roles' link to the API's change feed.
import { file, host, HTTP_URL, HTTP_URL_MUST, int, optionalText, readTable } from './kinds.ts';
import type { Config } from './types.ts';

export const SYNC_SETTINGS = {
  PALISADE_SYNC_URL: optionalText({ help: 'the API\'s URL (http:// or https://)' }),
  PALISADE_SYNC_TOKEN: optionalText({ help: 'this consumer\'s token (`palisade admin consumer add`)' }),
  PALISADE_SYNC_SECRET: optionalText({ help: 'this consumer\'s secret (`palisade admin consumer add`)' }),
  PALISADE_SYNC_HOST: host('127.0.0.1', { help: 'where it takes pushes and serves /healthz and /metrics' }),
  PALISADE_SYNC_PORT: int(5380, 0, 65535, { help: 'the port of `PALISADE_SYNC_HOST`' }),
  PALISADE_SYNC_POLL_MS: int(2000, 100, 600_000, { help: 'polling interval' }),
  PALISADE_SYNC_MAX_LAG_MS: int(30_000, 1000, 86_400_000, { help: '`/healthz` answers 503 "degraded" once the API\'s revision has not been applied for this long' }),
  PALISADE_SYNC_CA_FILE: file({ help: 'a PEM CA certificate trusted for the API\'s HTTPS besides the system\'s (a private CA)' }),
};

export function syncConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'sync'> {
  const v = readTable(SYNC_SETTINGS, env, problems);
  const url = v.PALISADE_SYNC_URL?.replace(/\/+$/, '');
  if (url && !HTTP_URL.test(url)) problems.push(`PALISADE_SYNC_URL=${url}: ${HTTP_URL_MUST}`);
  return {
    sync: {
      url,
      token: v.PALISADE_SYNC_TOKEN,
      secret: v.PALISADE_SYNC_SECRET,
      host: v.PALISADE_SYNC_HOST,
      port: v.PALISADE_SYNC_PORT,
      pollMs: v.PALISADE_SYNC_POLL_MS,
      maxLagMs: v.PALISADE_SYNC_MAX_LAG_MS,
      caPem: v.PALISADE_SYNC_CA_FILE,
    },
  };
}
