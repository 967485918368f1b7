// Certificates: the ACME CA, the key that seals private keys at rest, and the issuing work's pace.
import { checkedText, file, fileText, hexKey, HTTP_URL, HTTP_URL_MUST, hostPorts, int, LONG_HEX, LONG_HEX_MUST, optionalInt, optionalText, readTable } from './kinds.ts';
import { isIP } from 'node:net';
import { normaliseDomainName } from '../model/names.ts';
import { registrableDomainOf } from '../model/registrable.ts';
import type { Config } from './types.ts';

export const CERT_SETTINGS = {
  PALISADE_SECRET_KEY: hexKey(LONG_HEX, LONG_HEX_MUST, { help: '32–128 hex digits (`openssl rand -hex 32`): seals private keys at rest; required once certificates exist' }),
  PALISADE_SECRET_KEY_FILE: optionalText({ help: 'a file holding `PALISADE_SECRET_KEY` (read when that is unset)' }),
  PALISADE_ACME_DIRECTORY: checkedText(HTTP_URL, HTTP_URL_MUST, { help: 'the ACME directory URL (`https://acme-v02.api.letsencrypt.org/directory`); unset = no issuance' }),
  PALISADE_ACME_EMAIL: checkedText(/^[^@\s]+@[^@\s]+$/, 'must be an e-mail address', { help: 'the ACME account\'s contact' }),
  PALISADE_ACME_CAA_IDENTITY: optionalText({
    help: 'the CA\'s issuer domain as CAA records name it (RFC 8659: `0 issue "letsencrypt.org"`); an order CAA forbids is never placed',
    shown: 'the registrable domain of the directory\'s host',
  }),
  PALISADE_ACME_CA_FILE: file({ help: 'extra CA certificates (PEM) trusted for the directory\'s HTTPS (a test CA)' }),
  PALISADE_ACME_RESOLVER: hostPorts({ help: '`address:port` of the DNS server asked, before an HTTP-01 order, where each name points', shown: 'system resolver' }),
  PALISADE_ACME_CHECK_NAMESERVERS: hostPorts({
    help: '`address:port` list on which a DNS-01 TXT must be seen before the CA is told',
    shown: 'serve: its own DNS; api: NS1/NS2 on port 53',
  }),
  PALISADE_ACME_HTTP_PORT: optionalInt(1, 65535, { help: 'where edges answer HTTP-01, as the CA reaches them (tokens are fetched there first)', shown: 'serve: its edge\'s; api: `80`' }),
  PALISADE_ACME_POLL_MS: int(1000, 10, 60_000, { help: 'first delay of polling the CA for a pending validation or order' }),
  PALISADE_CERT_RETRY_SECONDS: int(60, 1, 86_400, { help: 'first retry delay (doubling, ±20 %, ≤ 6 h), also the least gap between two attempts for one domain' }),
  PALISADE_CERT_MAX_ATTEMPTS: int(8, 1, 100, { help: 'attempts before a task fails for good' }),
  PALISADE_CERT_ORDERS_PER_USER_HOUR: int(100, 1, 1_000_000, { help: 'ACME orders one account\'s domains may place per hour (the CA\'s limits are the service\'s, shared)' }),
  PALISADE_CERT_RENEW_CHECK_SECONDS: int(3600, 1, 86_400, { help: 'how often every domain with `ssl` is looked at (renewal, missing certificates)' }),
  PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS: int(120, 1, 3600, { help: 'how long a published challenge may take to be seen on our name servers or edges' }),
};

export function certConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'certs'> {
  // The key file is read only when the key itself is not given.
  const keyText = env.PALISADE_SECRET_KEY ?? fileText('PALISADE_SECRET_KEY_FILE', env.PALISADE_SECRET_KEY_FILE, problems)?.trim();
  const v = readTable(CERT_SETTINGS, { ...env, PALISADE_SECRET_KEY: keyText }, problems);
  return {
    certs: {
      directoryUrl: v.PALISADE_ACME_DIRECTORY || undefined,
      email: v.PALISADE_ACME_EMAIL || undefined,
      caaIdentity: caaIdentity(v.PALISADE_ACME_CAA_IDENTITY, v.PALISADE_ACME_DIRECTORY, problems),
      caPem: v.PALISADE_ACME_CA_FILE,
      secretKey: v.PALISADE_SECRET_KEY,
      resolver: v.PALISADE_ACME_RESOLVER[0],
      checkNameservers: v.PALISADE_ACME_CHECK_NAMESERVERS,
      httpPort: v.PALISADE_ACME_HTTP_PORT,
      renewCheckMs: v.PALISADE_CERT_RENEW_CHECK_SECONDS * 1000,
      retryBaseMs: v.PALISADE_CERT_RETRY_SECONDS * 1000,
      maxAttempts: v.PALISADE_CERT_MAX_ATTEMPTS,
      challengeTimeoutMs: v.PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS * 1000,
      pollMinMs: v.PALISADE_ACME_POLL_MS,
      ordersPerUserHour: v.PALISADE_CERT_ORDERS_PER_USER_HOUR,
    },
  };
}

/** PALISADE_ACME_CAA_IDENTITY, or the registrable domain of PALISADE_ACME_DIRECTORY's host. */
function caaIdentity(given: string | undefined, directory: string | undefined, problems: string[]): string | undefined {
  if (given !== undefined && given !== '') {
    const name = normaliseDomainName(given);
    if (name.ok) return name.value;
    problems.push(`PALISADE_ACME_CAA_IDENTITY=${given}: must be the CA's issuer domain name as CAA records name it (e.g. letsencrypt.org): ${name.message}`);
    return undefined;
  }
  const host = /^https?:\/\/(\[[^\]]+\]|[^/:?#]+)/.exec(directory ?? '')?.[1]?.toLowerCase();
  return host === undefined ? undefined : isIP(host) || host.startsWith('[') ? host : registrableDomainOf(host);
}
