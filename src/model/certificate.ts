// A domain's TLS certificate as the store keeps it and the change feed carries it to edges: the
// leaf and its chain as PEM, the private key, and what an edge or a renewal needs without parsing
// (names, validity, fingerprint). One certificate per domain, covering its protected names.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';

export interface CertificateState {
  /** The domain it belongs to (the store's key). */
  domain: string;
  /** DNS names in the certificate's subjectAltName ("*.example.org" for a wildcard). */
  names: string[];
  /** The leaf certificate, PEM. */
  cert: string;
  /** The intermediates after it, PEM ('' when none). */
  chain: string;
  /** The private key, PKCS#8 PEM. */
  key: string;
  notBefore: string;
  notAfter: string;
  /** SHA-256 of the leaf's DER, hex. */
  fingerprint: string;
  updated: string;
  revision: number;
}

export type CertificateInput = Omit<CertificateState, 'updated' | 'revision'>;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Reads a certificate file (leaf first, then its chain) and its private key, and checks that they
 * belong together; throws an Error whose message says what is wrong.
 */
export function certificateFromPem(domain: string, certText: string, keyText: string): CertificateInput {
  const blocks = certText.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error('no PEM certificate found');
  const leaf = new X509Certificate(blocks[0]!);
  let key;
  try {
    key = createPrivateKey(keyText);
  } catch (error) {
    throw new Error(`the private key is not readable PEM (${(error as Error).message})`);
  }
  if (!leaf.checkPrivateKey(key)) throw new Error("the private key does not match the certificate's public key");
  const names = (leaf.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  if (names.length === 0) throw new Error('the certificate names no DNS name (subjectAltName)');
  return {
    domain,
    names,
    cert: `${blocks[0]!}\n`,
    chain: blocks.slice(1).map((b) => `${b}\n`).join(''),
    key: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    notBefore: new Date(leaf.validFrom).toISOString(),
    notAfter: new Date(leaf.validTo).toISOString(),
    fingerprint: createHash('sha256').update(leaf.raw).digest('hex'),
  };
}

/** Whether `name` is covered by one of the certificate's names (a wildcard covers one label). */
export function certificateCovers(names: readonly string[], name: string): boolean {
  const dot = name.indexOf('.');
  return names.some((n) => n === name || (n.startsWith('*.') && dot !== -1 && n.slice(2) === name.slice(dot + 1)));
}
