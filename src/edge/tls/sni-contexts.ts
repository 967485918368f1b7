// Picks the certificate for a TLS handshake from the name the client asked for (SNI): the
// domain that serves the name (routing), its certificate from the feed if that covers the name
// and is valid now; otherwise the node's default certificate, which names no customer (never
// another customer's certificate). Secure contexts are built on first use and kept in a bounded
// LRU (each costs ~1 ms and ~25 KB), keyed by the certificate's fingerprint, so a certificate
// delivered by the feed is used from the next handshake; no restart, no online dependency.
import { createSecureContext, type SecureContext } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { certificateCovers, type CertificateState } from '../../model/certificate.ts';
import type { EdgeState } from '../edge-state.ts';
import { hostName } from '../routing.ts';

export class SniContexts {
  private readonly contexts: LRUCache<string, SecureContext>;
  readonly defaultContext: SecureContext;

  constructor(
    private readonly state: EdgeState,
    defaultCertificate: { key: string; cert: string },
    max = 5000,
  ) {
    this.contexts = new LRUCache({ max });
    this.defaultContext = createSecureContext(defaultCertificate);
  }

  /** The certificate the edge presents for `servername` (undefined: the default one). */
  certificateFor(servername: string | undefined): CertificateState | undefined {
    const host = hostName(servername);
    if (!host) return undefined;
    const route = this.state.routes.route(host);
    if (route.kind !== 'domain') return undefined;
    const cert = this.state.certificates.get(route.domain.domain);
    if (!cert || !certificateCovers(cert.names, host)) return undefined;
    const now = Date.now();
    return Date.parse(cert.notBefore) <= now && now < Date.parse(cert.notAfter) ? cert : undefined;
  }

  contextFor(servername: string | undefined): SecureContext {
    const cert = this.certificateFor(servername);
    if (!cert) return this.defaultContext;
    let context = this.contexts.get(cert.fingerprint);
    if (!context) {
      try {
        context = createSecureContext({ key: cert.key, cert: cert.cert + cert.chain });
      } catch {
        return this.defaultContext;
      }
      this.contexts.set(cert.fingerprint, context);
    }
    return context;
  }

  /** For tls.createServer: never fails a handshake for want of a certificate. */
  readonly callback = (servername: string, cb: (error: Error | null, context?: SecureContext) => void): void => {
    cb(null, this.contextFor(servername));
  };
}
