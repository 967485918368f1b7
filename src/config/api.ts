// The control-plane API: where it listens, HTTPS, its rate limits and who may read /metrics.
import { resolve } from 'node:path';
import { bool, fileText, host, int, optionalInt, optionalText, pattern, prefixes, readTable } from './kinds.ts';
import type { Config } from './types.ts';

export const API_SETTINGS = {
  PALISADE_API_HOST: host('127.0.0.1', { help: 'API listen address' }),
  PALISADE_API_PORT: int(8080, 0, 65535, { help: 'API port (0 = any free port)' }),
  PALISADE_API_BODY_LIMIT: int(1_048_576, 1024, 64 * 1_048_576, { help: 'largest request body, bytes' }),
  PALISADE_API_TLS_CERT: optionalText({ help: 'PEM certificate chain: the API (and console) speak HTTPS with it and `PALISADE_API_TLS_KEY`, read again within seconds when either file changes' }),
  PALISADE_API_TLS_KEY: optionalText({ help: 'the private key (PEM) of `PALISADE_API_TLS_CERT`' }),
  PALISADE_API_PLAIN_HTTP: bool(false, { help: '`true`: plain HTTP on a `PALISADE_API_HOST` other hosts reach (a TLS terminator in front does TLS); without it such a start is refused' }),
  PALISADE_API_TRUSTED_PROXIES: prefixes({ help: 'addresses or prefixes (comma-separated) whose `X-Forwarded-For` names the client, for rate limits and logs' }),
  PALISADE_API_RATE_PER_ADDRESS: int(2, 0, 1_000_000, { help: 'requests per second per client address (IPv6: /64) without a valid key; 0 = no limit' }),
  PALISADE_API_BURST_PER_ADDRESS: int(30, 1, 1_000_000, { help: 'burst of `PALISADE_API_RATE_PER_ADDRESS`' }),
  PALISADE_API_RATE_PER_KEY: int(100, 0, 1_000_000, { help: 'requests per second per API key; 0 = no limit' }),
  PALISADE_API_BURST_PER_KEY: int(300, 1, 1_000_000, { help: 'burst of `PALISADE_API_RATE_PER_KEY`' }),
  PALISADE_API_RATE_PER_ACCOUNT: optionalInt(0, 2_000_000, {
    help: 'requests per second of all of one account\'s keys together; 0 = no limit',
    shown: 'twice the per-key rate (`200`)',
  }),
  PALISADE_API_BURST_PER_ACCOUNT: optionalInt(1, 2_000_000, { help: 'burst of `PALISADE_API_RATE_PER_ACCOUNT`', shown: 'twice the per-key burst (`600`)' }),
  PALISADE_METRICS_TOKEN: pattern(/^[\x21-\x7e]{16,256}$/, 'must be 16 to 256 visible ASCII characters, no spaces (e.g. from `openssl rand -hex 32`)', {
    help: 'set: `/metrics` needs `Authorization: Bearer <token>` (16–256 visible ASCII characters); unset: `/metrics` answers loopback clients only',
    shown: 'unset',
  }),
  PALISADE_ALLOW_PRIVATE_BACKENDS: bool(false, { help: '`true` lets `backend`/`failover` be loopback or private addresses (tests, one machine)' }),
};

/** A rate of 0 turns the limit off. */
const bucket = (rate: number, burst: number) => (rate === 0 ? null : { rate, burst });

export function apiConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'api' | 'allowPrivateBackends'> {
  const v = readTable(API_SETTINGS, env, problems);
  const keyRate = v.PALISADE_API_RATE_PER_KEY;
  const keyBurst = v.PALISADE_API_BURST_PER_KEY;
  return {
    api: {
      host: v.PALISADE_API_HOST,
      port: v.PALISADE_API_PORT,
      bodyLimit: v.PALISADE_API_BODY_LIMIT,
      rateLimit: {
        address: bucket(v.PALISADE_API_RATE_PER_ADDRESS, v.PALISADE_API_BURST_PER_ADDRESS),
        key: bucket(keyRate, keyBurst),
        // Unset: twice one key's (so one runaway key leaves the account's other keys half), and off
        // when the per-key limit is off.
        account: bucket(v.PALISADE_API_RATE_PER_ACCOUNT ?? 2 * keyRate, v.PALISADE_API_BURST_PER_ACCOUNT ?? 2 * keyBurst),
      },
      metricsToken: v.PALISADE_METRICS_TOKEN,
      tls: tlsFiles(v.PALISADE_API_TLS_CERT, v.PALISADE_API_TLS_KEY, problems),
      plainHttp: v.PALISADE_API_PLAIN_HTTP,
      trustedProxies: v.PALISADE_API_TRUSTED_PROXIES,
    },
    allowPrivateBackends: v.PALISADE_ALLOW_PRIVATE_BACKENDS,
  };
}

/** The API's certificate and key files: both or neither, each readable now. */
function tlsFiles(cert: string | undefined, key: string | undefined, problems: string[]): { certFile: string; keyFile: string } | undefined {
  if (!cert && !key) return undefined;
  if (!cert || !key) {
    problems.push('PALISADE_API_TLS_CERT and PALISADE_API_TLS_KEY: set both (a PEM certificate chain and its private key) or neither');
    return undefined;
  }
  const read = [fileText('PALISADE_API_TLS_CERT', cert, problems), fileText('PALISADE_API_TLS_KEY', key, problems)];
  return read.every((t) => t !== undefined) ? { certFile: resolve(cert), keyFile: resolve(key) } : undefined;
}
