// Test certificates made by the real `openssl` command: a self-signed P-256 certificate for the
// given DNS names (the first is the subject), and its key.
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.ts';

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  /** SHA-256 of the DER, as node:tls's `fingerprint256` shows it (AA:BB:…). */
  fingerprint256: string;
}

let counter = 0;

export function makeCertificate(names: string[], days = 2): TestCertificate {
  const dir = tempDir('palisade-cert-');
  const n = counter++;
  const certPath = join(dir, `cert${n}.pem`);
  const keyPath = join(dir, `key${n}.pem`);
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${names.map((x) => `DNS:${x}`).join(',')}`, '-days', String(days), '-keyout', keyPath, '-out', certPath],
      { stdio: 'pipe' },
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? 'the `openssl` command is missing: install it (Debian: apt-get install openssl)' : `openssl failed: ${(error as Error).message}`);
  }
  const der = new X509Certificate(readFileSync(certPath)).raw;
  const hex = createHash('sha256').update(der).digest('hex').toUpperCase();
  return { certPath, keyPath, fingerprint256: hex.match(/../g)!.join(':') };
}
