// Picks the certificate for a TLS handshake from the name the client asked for (SNI): the
// domain that serves the name (routing), its certificate from the feed if that covers the name
// and is valid now; otherwise the node's default certificate, which names no customer (never
// another customer's certificate). A customer's context holds the customer's certificate alone:
// with the node's one beside it, OpenSSL would pick by key type and signature algorithms and could
// show the node's to clients that accept both. A name of a domain with `ssl: false` gets no
// certificate at all: the handshake is refused (the connection closed before any certificate),
// as a CDN does for a name it holds none for — never the node's one, which a browser rejects as
// a certificate for the wrong name. Secure contexts are built on first use and kept in a bounded
// LRU (each costs ~1 ms and ~25 KB), keyed by the certificate's fingerprint, so a certificate
// delivered by the feed is used from the next handshake; no restart, no online dependency.
import { createSecureContext, type SecureContext } from 'node:tls';
import type { LRUCache } from 'lru-cache';
import { lruByCount } from '../lru-by-count.ts';
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
    this.contexts = lruByCount(max);
    this.defaultContext = createSecureContext(defaultCertificate);
  }

  /** The certificate the edge presents for `servername` (undefined: the default one). */
  certificateFor(servername: string | undefined): CertificateState | undefined {
    const host = hostName(servername);
    if (!host) return undefined;
    const route = this.state.routes.route(host);
    // ssl off: no HTTPS for the domain, even with a certificate in the store (see refuses()).
    if (route.kind !== 'domain' || !route.domain.ssl) return undefined;
    const cert = this.state.certificates.get(route.domain.domain);
    if (!cert || !certificateCovers(cert.names, host)) return undefined;
    const now = Date.now();
    return Date.parse(cert.notBefore) <= now && now < Date.parse(cert.notAfter) ? cert : undefined;
  }

  /** Whether the handshake for `servername` is refused: a name of a domain with ssl off. */
  refuses(servername: string | undefined): boolean {
    const host = hostName(servername);
    if (!host) return false;
    const route = this.state.routes.route(host);
    return route.kind === 'domain' && !route.domain.ssl;
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

  /**
   * For tls.createServer: fails the handshake only for names of domains with ssl off (Node closes
   * the connection; the server's tlsClientError listener keeps it quiet); never for want of a
   * certificate.
   */
  readonly callback = (servername: string, cb: (error: Error | null, context?: SecureContext) => void): void => {
    if (this.refuses(servername)) return cb(new Error(`no HTTPS for ${servername}: ssl is off for its domain`));
    cb(null, this.contextFor(servername));
  };
}
