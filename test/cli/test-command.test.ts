// The README's test command is the one CI runs, word for word, and the packages the README says
// the set-up installs are those the set-up script installs.
import { accessSync, constants, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const tests = readme.slice(readme.indexOf('## Tests\n'), readme.indexOf('\n## ', readme.indexOf('## Tests\n') + 1));
const ci = readFileSync(`${root}.ci/run`, 'utf8');
const setup = readFileSync(`${root}scripts/setup-test-deps.sh`, 'utf8');

describe("the README's test command", () => {
  it('is one line, and .ci/run runs exactly it', () => {
    const blocks = [...tests.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).not.toContain('\n');
    expect(/^TEST_COMMAND='(.*)'$/m.exec(ci)?.[1]).toBe(blocks[0]);
    expect(ci).toMatch(/^eval "\$TEST_COMMAND"$/m);
    accessSync(`${root}scripts/setup-test-deps.sh`, constants.X_OK);
  });

  it('names the Debian packages the set-up script installs', () => {
    const packages = [...setup.matchAll(/^ {2}\[([a-z0-9.-]+)\]=/gm)].map((m) => m[1]!).sort();
    const listed = /`apt-get install ([^`]+)`/.exec(tests.replace(/\n/g, ' '))![1]!.split(/\s+/).sort();
    expect(listed).toEqual(packages);
  });
});
