// WAF benchmark: the shared corpus (GoTestWAF's attack sets and false-positive set) replayed
// through `palisade serve`'s edge with baseprotection, and through nginx + ModSecurity + OWASP CRS
// 3.3 at paranoia level 1 (Debian libnginx-mod-http-modsecurity, modsecurity-crs) as the peer, in
// the same run: detection per attack class and false positives, side by side.
//
//   npm run bench:waf        (needs nginx, libnginx-mod-http-modsecurity and modsecurity-crs)
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/redis-server.ts';
import { runBench } from './harness.ts';
import { runAdminCli, startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { attackCases, benignCases, requestFor, type CorpusCase, type CorpusRequest } from '../test/helpers/waf-corpus.ts';

const MODSEC_MODULE = '/usr/lib/nginx/modules/ngx_http_modsecurity_module.so';
const CRS_RULES = '/usr/share/modsecurity-crs/rules';
for (const [path, pkg] of [
  [MODSEC_MODULE, 'libnginx-mod-http-modsecurity'],
  [CRS_RULES, 'modsecurity-crs'],
  ['/etc/nginx/modsecurity.conf', 'libnginx-mod-http-modsecurity'],
] as const) {
  if (!existsSync(path)) {
    console.error(`bench:waf needs ${path} (Debian: apt-get install nginx-light ${pkg})`);
    process.exit(2);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-waf-'));
chmodSync(dir, 0o755);
const children: ChildProcess[] = [];
let clientCounter = 0;

function send(port: number, req: CorpusRequest, host: string, forwardedFor?: string): Promise<number> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { host, ...req.headers, ...(forwardedFor && { 'x-forwarded-for': forwardedFor }) };
    if (req.body) headers['content-length'] = String(req.body.length);
    const r = request({ host: '127.0.0.1', port, path: req.path, method: req.method, localAddress: '127.0.0.9', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    r.on('error', () => resolve(0));
    r.end(req.body);
  });
}

async function replay(port: number, host: string, cases: CorpusCase[], perClient: boolean): Promise<Map<string, { refused: number; total: number }>> {
  const out = new Map<string, { refused: number; total: number }>();
  for (const c of cases) {
    const req = requestFor(c);
    if (!req) continue;
    clientCounter++;
    const status = await send(port, req, host, perClient ? `10.${(clientCounter >> 16) & 255}.${(clientCounter >> 8) & 255}.${clientCounter & 255}` : undefined);
    const entry = out.get(c.type) ?? { refused: 0, total: 0 };
    entry.total++;
    if (status >= 400 && status < 500) entry.refused++;
    out.set(c.type, entry);
  }
  return out;
}

async function main(): Promise<void> {
  // The backend both proxies send passed requests to.
  const backendPort = await freePort();
  const nginxPort = await freePort();
  writeFileSync(
    join(dir, 'modsec.conf'),
    [
      'Include /etc/nginx/modsecurity.conf',
      'SecRuleEngine On',
      'SecAuditEngine Off',
      'Include /etc/modsecurity/crs/crs-setup.conf',
      `Include ${CRS_RULES}/*.conf`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'nginx.conf'),
    `load_module ${MODSEC_MODULE};
worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path ${dir}/b1; proxy_temp_path ${dir}/b2; fastcgi_temp_path ${dir}/b3; uwsgi_temp_path ${dir}/b4; scgi_temp_path ${dir}/b5;
  server { listen 127.0.0.1:${backendPort}; location / { return 200 "ok"; } }
  server { listen 127.0.0.1:${nginxPort}; modsecurity on; modsecurity_rules_file ${dir}/modsec.conf; location / { proxy_pass http://127.0.0.1:${backendPort}; } }
}
`,
  );
  const nginx = spawn('nginx', ['-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'inherit', 'inherit'] });
  children.push(nginx);

  const env = { PALISADE_DATA_DIR: join(dir, 'data'), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.9', PALISADE_LOG_LEVEL: 'warn', PALISADE_EDGE_CLIENT_RATE: '0' };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'waf', '--email', 'waf@example.org'])).stdout).key.api_key as string;
  const serve = await startServe({ ...env, PALISADE_LOG_LEVEL: 'info' });
  const res = await fetch(`${serve.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'waf.example', backend: `127.0.0.1:${backendPort}` }) });
  if (res.status !== 201) throw new Error(`domain: ${res.status}`);
  const edgePort = Number(new URL(serve.edgeUrl!).port);
  for (let i = 0; i < 100 && (await send(edgePort, { method: 'GET', path: '/', headers: {} }, 'waf.example', '10.255.0.1')) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  for (let i = 0; i < 100 && (await send(nginxPort, { method: 'GET', path: '/', headers: {} }, 'waf.example')) !== 200; i++) await new Promise((r) => setTimeout(r, 50));

  const attacks = attackCases();
  const benign = benignCases();
  const ours = await replay(edgePort, 'waf.example', attacks, true);
  const peer = await replay(nginxPort, 'waf.example', attacks, false);
  const oursFp = await replay(edgePort, 'waf.example', benign, true);
  const peerFp = await replay(nginxPort, 'waf.example', benign, false);
  await stopProcess(serve);

  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`.padStart(7);
  console.log(`\n${'class'.padEnd(18)} ${'cases'.padStart(6)} ${'edge'.padStart(8)} ${'CRS PL1'.padStart(8)}`);
  let [ot, pt, n] = [0, 0, 0];
  for (const [type, mine] of ours) {
    const theirs = peer.get(type)!;
    ot += mine.refused;
    pt += theirs.refused;
    n += mine.total;
    console.log(`${type.padEnd(18)} ${String(mine.total).padStart(6)} ${pct(mine.refused, mine.total)} ${pct(theirs.refused, theirs.total)}`);
  }
  console.log(`${'all attacks'.padEnd(18)} ${String(n).padStart(6)} ${pct(ot, n)} ${pct(pt, n)}`);
  const fp = (m: Map<string, { refused: number; total: number }>) => [...m.values()].reduce((a, b) => [a[0]! + b.refused, a[1]! + b.total], [0, 0]);
  const [of, on] = fp(oursFp);
  const [pf, pn] = fp(peerFp);
  console.log(`${'false positives'.padEnd(18)} ${String(on).padStart(6)} ${pct(of!, on!)} ${pct(pf!, pn!)}   (lower is better)`);
}

runBench(main, children, dir);
