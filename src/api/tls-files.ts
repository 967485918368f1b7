// The API's own certificate, from PEM files the operator gives (PALISADE_API_TLS_CERT/_KEY), read
// again when either file changes: a renewal (certbot, an internal CA's agent) takes effect without
// a restart, from the next handshake. A pair that does not load (half-written, mismatched) is
// refused and the served certificate stays, so a bad renewal never takes the API down.
import { X509Certificate } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';

export interface TlsPair {
  cert: string;
  key: string;
}

/** How often the files' times are looked at (fs.watchFile polls; inotify misses renames into place). */
const WATCH_MS = 2_000;

/** Reads the pair and checks that it loads (the key matches the certificate); throws saying what is wrong. */
export function readTlsPair(files: { certFile: string; keyFile: string }): TlsPair {
  const cert = readFileSync(files.certFile, 'utf8');
  const key = readFileSync(files.keyFile, 'utf8');
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(`${files.certFile} and ${files.keyFile} do not load as a certificate and its key: ${(error as Error).message}`);
  }
  return { cert, key };
}

/** What a log line says of a certificate: its subject names and when it ends. */
export function describeCertificate(pem: string): { names: string; not_after: string } {
  const x509 = new X509Certificate(pem);
  return { names: x509.subjectAltName ?? x509.subject, not_after: new Date(x509.validTo).toISOString() };
}

/** Follows the files and puts a new pair into the server's context; returns the stop function. */
export function followTlsFiles(server: TlsServer, files: { certFile: string; keyFile: string }, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    // Both files of a renewal are usually written one after the other: read once they settle.
    clearTimeout(timer);
    timer = setTimeout(() => {
      try {
        const pair = readTlsPair(files);
        server.setSecureContext(pair);
        log.info({ certificate: describeCertificate(pair.cert) }, 'api: TLS certificate reloaded');
      } catch (error) {
        log.warn({ err: (error as Error).message }, 'api: the new TLS certificate files do not load; still serving the previous certificate');
      }
    }, 200);
  };
  watchFile(files.certFile, { interval: WATCH_MS, persistent: false }, reload);
  watchFile(files.keyFile, { interval: WATCH_MS, persistent: false }, reload);
  return () => {
    clearTimeout(timer);
    unwatchFile(files.certFile, reload);
    unwatchFile(files.keyFile, reload);
  };
}
