// PALISADE_SYNC_CA_FILE: a name server or edge that reaches the API over HTTPS signed by a private
// CA trusts that CA besides the system's. Added to the process's default CA list, which Node's
// fetch (the change feed's client) and every other TLS client without a `ca` of its own use.
import { getCACertificates, setDefaultCACertificates } from 'node:tls';

export function trustFeedCa(caPem: string | undefined): void {
  if (!caPem) return;
  const certificates = caPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (certificates.length === 0) throw new Error('PALISADE_SYNC_CA_FILE holds no PEM certificate');
  setDefaultCACertificates([...getCACertificates('default'), ...certificates]);
}
