// A real ACME CA for tests: Debian's `pebble` (Let's Encrypt's test CA) on loopback, with a
// throwaway CA of our own for its HTTPS, and `pebble-challtestsrv` as "the Internet's DNS" where a
// test needs names to resolve somewhere other than our own name servers.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { readFileSync } from 'node:fs';
import { freePort } from './redis-server.ts';
import { tempDir } from './temp.ts';
import { tiedToWorker } from './tied-spawn.ts';

function requireTool(name: string, pkg: string): void {
  if (spawnSync('sh', ['-c', `command -v ${name}`]).status !== 0) throw new Error(`${name} is required for these tests (Debian: apt-get install ${pkg})`);
}

function openssl(args: string[]): void {
  requireTool('openssl', 'openssl');
  execFileSync('openssl', args, { stdio: 'pipe' });
}

/** A CA and a certificate it signed for localhost / 127.0.0.1: pebble's HTTPS identity. */
function pebbleTls(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const caFile = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const csr = join(dir, 'cert.csr');
  const ext = join(dir, 'ext.cnf');
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=palisade test ACME CA', '-days', '2', '-keyout', caKey, '-out', caFile]);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=localhost', '-keyout', keyFile, '-out', csr]);
  writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', certFile]);
  return { caFile, certFile, keyFile };
}

async function waitForOutput(child: ChildProcess, what: RegExp, name: string, timeoutMs = 15_000): Promise<() => string> {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const started = Date.now();
  while (!what.test(out)) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${out}`);
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return () => out;
}

async function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export interface TestPebble {
  /** The ACME directory URL. */
  directory: string;
  /** PEM file of the CA its HTTPS certificate comes from (PALISADE_ACME_CA_FILE). */
  caFile: string;
  /** The root that signs the certificates it issues (new at each start). */
  root(): Promise<string>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts pebble resolving every name through `dnsServer` (address:port), validating HTTP-01 on
 * `httpPort`, issuing certificates valid for `validitySeconds` (pebble's default: 5 years).
 */
export async function startPebble(options: { dnsServer: string; httpPort: number; validitySeconds?: number }): Promise<TestPebble> {
  requireTool('pebble', 'pebble');
  const dir = tempDir('palisade-pebble-');
  const tls = pebbleTls(dir);
  const [port, management, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'pebble.json');
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: tls.certFile,
        privateKey: tls.keyFile,
        httpPort: options.httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        ...(options.validitySeconds !== undefined && { certificateValidityPeriod: options.validitySeconds }),
      },
    }),
  );
  const child = spawn(...tiedToWorker('pebble', ['-config', config, '-dnsserver', options.dnsServer]), {
    // No sleeping before validations, no random nonce rejections, no reuse of validations across
    // orders (each order is validated for real).
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = await waitForOutput(child, /Listening on/, 'pebble');
  const dispatcher = new Agent({ connect: { ca: readFileSync(tls.caFile, 'utf8') } });
  return {
    directory: `https://127.0.0.1:${port}/dir`,
    caFile: tls.caFile,
    root: async () => (await undiciFetch(`https://127.0.0.1:${management}/roots/0`, { dispatcher })).text(),
    output,
    stop: () => halt(child),
  };
}

export interface TestChallSrv {
  /** address:port of its DNS server (every A query answers 127.0.0.1 unless told otherwise; no AAAA). */
  dns: string;
  /** Makes `host` resolve to `addresses` (A records), and only to them. */
  addA(host: string, addresses: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** pebble-challtestsrv as a DNS server only. */
export async function startChallSrv(): Promise<TestChallSrv> {
  requireTool('pebble-challtestsrv', 'pebble');
  const [dns, management] = [await freePort(), await freePort()];
  const child = spawn(...tiedToWorker('pebble-challtestsrv', ['-dns01', `127.0.0.1:${dns}`, '-management', `127.0.0.1:${management}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-defaultIPv4', '127.0.0.1', '-defaultIPv6', '']), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForOutput(child, /Starting management server/, 'pebble-challtestsrv');
  return {
    dns: `127.0.0.1:${dns}`,
    addA: async (host, addresses) => {
      const fqdn = host.endsWith('.') ? host : `${host}.`;
      // Replaces what the name had (add-a alone adds to it).
      for (const [path, body] of [['clear-a', { host: fqdn }], ['add-a', { host: fqdn, addresses }]] as const) {
        const res = await fetch(`http://127.0.0.1:${management}/${path}`, { method: 'POST', body: JSON.stringify(body) });
        if (!res.ok) throw new Error(`challtestsrv ${path}: HTTP ${res.status}`);
      }
    },
    stop: () => halt(child),
  };
}
