// The operator's commands for zone files and secondaries, as a shell runs them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { openStore } from '../../src/store/index.ts';

afterAll(() => removeTempDirs());
const SECRET = Buffer.alloc(32, 1).toString('base64');

describe('palisade admin secondary', () => {
  it('adds, lists (no secret shown) and removes; refuses bad input with exit 2', async () => {
    const env = { PALISADE_DATA_DIR: tempDir() };
    const add = await runAdminCli(env, ['secondary', 'add', '--name', 'knot1', '--address', '192.0.2.53', '--address', '2001:db8::53', '--tsig-key', `hmac-sha256:xfr:${SECRET}`, '--zone', 'Example.ORG']);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ name: 'knot1', addresses: ['192.0.2.53', '2001:db8::53'], port: 53, zones: ['example.org'], catalog: true, tsig_key: 'hmac-sha256:xfr' });
    const list = await runAdminCli(env, ['secondary', 'list']);
    expect(list.stdout).not.toContain(SECRET);
    expect(JSON.parse(list.stdout)).toHaveLength(1);
    const bad: Array<[string[], RegExp]> = [
      [['secondary', 'add', '--name', 'x', '--address', 'not-an-ip', '--tsig-key', `k:${SECRET}`], /not an IP address/],
      [['secondary', 'add', '--name', 'x', '--address', '192.0.2.1', '--tsig-key', 'k:c2hvcnQ='], /at least 16/],
      [['secondary', 'add', '--name', 'x', '--address', '192.0.2.1', '--tsig-key', `hmac-md5:k:${SECRET}`], /not supported/],
      [['secondary', 'add', '--name', 'x', '--tsig-key', `k:${SECRET}`], /at least one address/],
      [['secondary', 'add', '--name', 'knot1', '--address', '192.0.2.1', '--tsig-key', `k:${SECRET}`], /exists/],
      [['secondary', 'add', '--name', 'x', '--address', '192.0.2.1', '--tsig-key', `XFR:${Buffer.alloc(32, 2).toString('base64')}`], /key xfr is secondary knot1's/],
      [['secondary', 'remove', 'nobody'], /no secondary/],
    ];
    for (const [args, message] of bad) {
      const r = await runAdminCli(env, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect((await runAdminCli(env, ['secondary', 'remove', 'knot1'])).code).toBe(0);
    expect(JSON.parse((await runAdminCli(env, ['secondary', 'list'])).stdout)).toEqual([]);
  }, 60_000);
});

describe('palisade admin zone import', () => {
  it('imports a file into the holder\'s zone, and a bad file names its lines and changes nothing', async () => {
    const env = { PALISADE_DATA_DIR: tempDir() };
    const { user } = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'z', '--email', 'z@example.org'])).stdout);
    const store = openStore({ dataDir: env.PALISADE_DATA_DIR, changeRetention: 1000 });
    await store.createZone(() => ({ domain: { domain: 'cli.example', ownerId: user.id, backend: '198.51.100.1', enabled: true, ns_active: false } as never, records: [] }));
    await store.close();
    const good = join(env.PALISADE_DATA_DIR, 'good.zone');
    writeFileSync(good, '$ORIGIN cli.example.\nwww 300 IN A 192.0.2.1\n@ MX 10 mail\nmail A 192.0.2.2\n');
    const dry = await runAdminCli(env, ['zone', 'import', 'cli.example', good, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, added: 3 });
    const applied = await runAdminCli(env, ['zone', 'import', 'cli.example', good]);
    expect(JSON.parse(applied.stdout)).toMatchObject({ dry_run: false, added: 3, removed: 0 });
    const bad = join(env.PALISADE_DATA_DIR, 'bad.zone');
    writeFileSync(bad, 'www A 192.0.2.1\n$INCLUDE /etc/passwd\n');
    const refused = await runAdminCli(env, ['zone', 'import', 'cli.example', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/line 2: \$INCLUDE is not accepted/);
    const again = await runAdminCli(env, ['zone', 'import', 'cli.example', good]);
    expect(JSON.parse(again.stdout)).toMatchObject({ added: 0, removed: 0, unchanged: 3 });
  }, 60_000);
});
