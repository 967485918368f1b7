// The README's operator CLI list is the one a newcomer reads: every command `palisade admin --help`
// names is in it (it lagged before: `consumer add --node`, `domain claims|release|prove`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/spawn-palisade.ts';

describe("the README's CLI list", () => {
  it('names every command and option of `palisade admin --help`', () => {
    let help = '';
    try {
      help = execFileSync(process.execPath, [BIN, 'admin', '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PALISADE_DATA_DIR: '/nonexistent' } });
    } catch (error) {
      help = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
    }
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /## Operator CLI\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
    // Command lines of the help: two spaces, then lower-case words (the command), then its options.
    const commands = help.split('\n').filter((l) => /^ {2}[a-z]/.test(l));
    expect(commands.length).toBeGreaterThan(20);
    for (const line of commands) {
      for (const part of line.trim().split(/\s+\|\s+/)) {
        const words = part.split(/\s{2,}/)[0]!.trim();
        const command = /^[a-z-]+ [a-z-]+/.exec(words)![0];
        expect(block, `README lacks \`palisade admin ${command}\``).toContain(`palisade admin ${command}`);
        for (const option of words.match(/--[a-z-]+/g) ?? []) expect(block, `README lacks ${option} of \`${command}\``).toContain(option);
      }
    }
  });
});
