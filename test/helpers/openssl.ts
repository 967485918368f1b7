// The real `openssl` command for TLS tests: certificates of either key type (RSA-2048 or P-256),
// with chosen names and validity dates, and `s_client` handshakes whose served certificate is read
// back. A missing `openssl` fails the test with what to install, never skips it.
import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.ts';

const MISSING = 'the `openssl` command is missing: install it (Debian: apt-get install openssl)';

function openssl(args: string[], cwd?: string): void {
  try {
    execFileSync('openssl', args, { stdio: 'pipe', cwd });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '');
    throw new Error(code === 'ENOENT' ? MISSING : `openssl ${args[0]} failed: ${stderr || (error as Error).message}`);
  }
}

export interface OpensslCertificate {
  certPath: string;
  keyPath: string;
  /** The certificate, parsed. */
  x509: X509Certificate;
}

export interface CertificateSpec {
  key: 'rsa' | 'ec';
  /** subjectAltName DNS names; none: a certificate with only a subject CN. */
  names: string[];
  /** The subject's CN (default: the first name). */
  cn?: string;
  /** Validity, as Dates (default: from a day ago for two days). */
  from?: Date;
  to?: Date;
}

// openssl ca's date form: YYYYMMDDHHMMSSZ.
const caDate = (d: Date): string => `${d.toISOString().slice(0, 19).replace(/[-:T]/g, '')}Z`;

/**
 * A self-signed certificate made by `openssl ca -selfsign` (the one command of Debian's openssl 3.0
 * that takes any start and end date, so expired certificates can be made too).
 */
export function opensslCertificate(spec: CertificateSpec): OpensslCertificate {
  const dir = tempDir('palisade-openssl-');
  const keyArgs = spec.key === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  const san = spec.names.length > 0 ? ['-addext', `subjectAltName=${spec.names.map((n) => `DNS:${n}`).join(',')}`] : [];
  openssl(['req', '-new', ...keyArgs, '-nodes', '-subj', `/CN=${spec.cn ?? spec.names[0]}`, ...san, '-keyout', 'key.pem', '-out', 'req.csr'], dir);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), `${Date.now().toString(16).padStart(16, '0')}\n`);
  writeFileSync(
    join(dir, 'ca.cnf'),
    '[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\npolicy = p\ncopy_extensions = copy\nunique_subject = no\n[p]\ncommonName = supplied\n',
  );
  const from = spec.from ?? new Date(Date.now() - 86_400_000);
  const to = spec.to ?? new Date(Date.now() + 2 * 86_400_000);
  openssl(['ca', '-batch', '-config', 'ca.cnf', '-selfsign', '-keyfile', 'key.pem', '-in', 'req.csr', '-startdate', caDate(from), '-enddate', caDate(to), '-notext', '-out', 'cert.pem'], dir);
  const certPath = join(dir, 'cert.pem');
  return { certPath, keyPath: join(dir, 'key.pem'), x509: new X509Certificate(readFileSync(certPath)) };
}

export interface Handshake {
  /** The leaf the server presented; undefined when the handshake failed. */
  certificate?: X509Certificate;
  protocol?: string;
  output: string;
}

/**
 * `openssl s_client` to host:port naming `servername` in SNI (none: `-noservername`), with its
 * default ciphers and signature algorithms unless `extra` says otherwise.
 */
export function sClient(port: number, servername: string | undefined, extra: string[] = [], host = '127.0.0.1'): Promise<Handshake> {
  const sni = servername === undefined ? ['-noservername'] : ['-servername', servername];
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', ['s_client', '-connect', `${host}:${port}`, ...sni, ...extra], { timeout: 10_000 }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') return reject(new Error(MISSING));
      const output = `${stdout}\n${stderr}`;
      const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(stdout)?.[0];
      const protocol = /Protocol\s*:\s*(\S+)/.exec(stdout)?.[1] ?? /New, (TLSv[\d.]+)/.exec(stdout)?.[1];
      resolve({ certificate: pem ? new X509Certificate(pem) : undefined, protocol, output });
    });
    // Nothing to send: stdin closed at once ends the session after the handshake.
    child.stdin?.end();
  });
}
