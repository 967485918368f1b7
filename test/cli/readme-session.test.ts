// The README's session, run exactly as a newcomer pastes it: the service started the way the
// README says (`npm start` with the two flags for one machine), then every ```bash block of the
// README in order, in one bash. Only the well-known ports are moved to free ones (tests must not
// depend on 8080 being free); the data directory is a scratch one. Every curl must get a 2xx
// (`--fail-with-body` added around the README's own flags), every dig a NOERROR with an answer,
// and the script must end with exit 0 under `set -euo pipefail`.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS } from '../helpers/config.ts';
import { freePort } from '../helpers/redis-server.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');

/** The README's runnable blocks (```bash), in order. */
const bashBlocks = () => [...readme.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The command the README gives for starting the service for the session. */
const startLine = () => /```sh\n(PALISADE_[^\n]*npm start)\n```/.exec(readme)?.[1];

// curl and dig as the README calls them, made strict: a non-2xx answer fails the script (a GET is
// tried again briefly first — a person pasting is slower than the parts passing a change on).
const STRICT = `
set -euo pipefail
# What the session starts in the background (its backend) goes with it, even when a step fails.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
curl() {
  local attempt
  for attempt in 1 2 3 4 5; do
    if command curl --fail-with-body "$@"; then return 0; fi
    case " $* " in *" -X "*) break ;; esac
    sleep 0.2
  done
  echo "README step failed: curl $*" >&2
  return 1
}
dig() {
  local out attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    out=$(command dig "$@")
    if grep -q 'status: NOERROR' <<<"$out" && grep -q 'ANSWER: [1-9]' <<<"$out"; then echo "$out"; return 0; fi
    sleep 0.2
  done
  echo "$out"
  echo "README step failed: dig $*" >&2
  return 1
}
`;

afterAll(() => removeTempDirs());

describe('README', () => {
  it('says how to start the service for the session, and the session has blocks to run', () => {
    expect(startLine()).toBe('PALISADE_OWNERSHIP_PROOF=off PALISADE_ALLOW_PRIVATE_BACKENDS=true PALISADE_WEBHOOK_ALLOW_PRIVATE=true npm start');
    expect(bashBlocks().length).toBeGreaterThanOrEqual(5);
    // Nothing in them is to be replaced by hand.
    for (const block of bashBlocks()) expect(block).not.toMatch(/…|wh_|pk_|<[a-z]+>/);
  });

  it('its session runs top to bottom as pasted against `npm start`', async () => {
    const [api, dns, edge, edgeTls, backend] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const data = tempDir();
    const env = { ...process.env, ...NO_RATE_LIMITS, PALISADE_DATA_DIR: data, PALISADE_API_PORT: String(api), PALISADE_DNS_PORT: String(dns), PALISADE_EDGE_HTTP_PORT: String(edge), PALISADE_EDGE_HTTPS_PORT: String(edgeTls) };
    const service = spawn('bash', ['-c', `exec env ${startLine()!}`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let serviceOut = '';
    service.stdout.on('data', (d: Buffer) => (serviceOut += d.toString()));
    service.stderr.on('data', (d: Buffer) => (serviceOut += d.toString()));
    const serviceExited = new Promise((resolve) => service.once('exit', resolve));
    try {
      for (let i = 0; i < 600 && !serviceOut.includes('palisade serving'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(serviceOut).toContain('palisade serving');

      const moved = (text: string) =>
        text
          .replaceAll('127.0.0.1:8080', `127.0.0.1:${api}`)
          .replaceAll('-p 5300', `-p ${dns}`)
          .replaceAll('127.0.0.1:8081', `127.0.0.1:${edge}`)
          .replaceAll('127.0.0.1:3000', `127.0.0.1:${backend}`)
          .replaceAll('listen(3000,', `listen(${backend},`);
      const script = STRICT + bashBlocks().map(moved).join('\n');
      const session = spawn('bash', ['-c', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      session.stdout.on('data', (d: Buffer) => (out += d.toString()));
      session.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => session.once('exit', (exitCode) => resolve(exitCode)));
      expect(code, `the README's session failed:\n${out.slice(-4000)}`).toBe(0);
      // What the session shows is what it claims.
      expect(out).toContain('hello from the backend');
      expect(out).toMatch(/"api_key": ?"pk_/);
      expect(out).toMatch(/shop\.example\.org\.\s+\d+\s+IN\s+A\s+192\.0\.2\.1/);
      expect(out).toMatch(/www\.example\.org\.\s+\d+\s+IN\s+A\s+192\.0\.2\.10/);
      expect(out).toContain('no certificate yet');
      expect(out).toMatch(/"secret": ?"/);
    } finally {
      service.kill('SIGTERM');
      await serviceExited;
    }
  }, 180_000);
});
