// A private CA made with the real `openssl`, and server certificates it signs for loopback
// addresses (subjectAltName IP:127.0.0.1): what an operator's internal CA gives the API.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.ts';

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { stdio: 'pipe', cwd });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('the `openssl` command is missing: install it (Debian: apt-get install openssl)');
    throw new Error(`openssl ${args[0]} failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
}

export interface PrivateCa {
  dir: string;
  caFile: string;
  /** A new server certificate for `ip` (and localhost), signed by this CA: its cert and key files. */
  issue(name: string, ip?: string): { certFile: string; keyFile: string };
}

export function privateCa(): PrivateCa {
  const dir = tempDir('palisade-ca-');
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=Palisade test CA', '-days', '2', '-keyout', 'ca.key', '-out', 'ca.pem'], dir);
  let serial = 0;
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    issue(name, ip = '127.0.0.1') {
      serial += 1;
      const base = `${name}-${serial}`;
      writeFileSync(join(dir, `${base}.ext`), `subjectAltName=IP:${ip},DNS:localhost\nextendedKeyUsage=serverAuth\n`);
      openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${base}.key`, '-out', `${base}.csr`], dir);
      openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(serial), '-days', '1', '-extfile', `${base}.ext`, '-out', `${base}.pem`], dir);
      return { certFile: join(dir, `${base}.pem`), keyFile: join(dir, `${base}.key`) };
    },
  };
}
