// The settings are declared once (src/config/): the README's settings table and `palisade --help`
// are generated from the declarations, so neither can drift from what loadConfig reads.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { README_END, README_START, settingsHelp, settingsTable } from '../../src/config/docs.ts';
import { SETTING_GROUPS } from '../../src/config/groups.ts';
import { BIN } from '../helpers/spawn-palisade.ts';

const run = promisify(execFile);
const README = new URL('../../README.md', import.meta.url);
const operatorSettings = SETTING_GROUPS.flatMap((g) => Object.entries(g.settings).filter(([, s]) => !s.internal).map(([name]) => name));

describe("the README's settings table", () => {
  it('is the one generated from the declarations', () => {
    const readme = readFileSync(README, 'utf8');
    const start = readme.indexOf(README_START);
    const end = readme.indexOf(README_END);
    expect(start, `README.md lacks the marker ${README_START}`).toBeGreaterThanOrEqual(0);
    expect(end, `README.md lacks the marker ${README_END}`).toBeGreaterThan(start);
    const current = readme.slice(start + README_START.length, end);
    expect(current, 'README.md\'s settings table differs from the declarations in src/config/: run `npm run docs:settings` to regenerate it').toBe(settingsTable());
  });

  it('names every setting an operator sets, each once', () => {
    const table = settingsTable();
    for (const name of operatorSettings) expect(table.match(new RegExp(`^\\| \`${name}\` \\|`, 'gm'))?.length ?? 0, name).toBe(1);
    expect(new Set(operatorSettings).size).toBe(operatorSettings.length);
  });
});

describe('palisade --help', () => {
  it('lists every setting by role, with its default', async () => {
    const { stdout } = await run(process.execPath, [BIN, '--help']);
    for (const name of operatorSettings) expect(stdout, name).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(stdout).toMatch(/^ {2}PALISADE_API_PORT +8080 +API port/m);
    expect(stdout).toContain(settingsHelp());
  });

  it('palisade <role> --help lists that role\'s settings only', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'dns', '--help']);
    expect(stdout).toContain('PALISADE_DNS_PORT');
    expect(stdout).toContain('PALISADE_SYNC_URL');
    expect(stdout).not.toContain('PALISADE_EDGE_HTTP_PORT');
    expect(stdout).not.toContain('PALISADE_API_RATE_PER_KEY');
  });
});
