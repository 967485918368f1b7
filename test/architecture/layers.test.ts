// The import rules (scripts/layers.js, enforced by `npm run check`) and the folders' READMEs say
// the same thing, and cover every part of src/: a folder or root file the rules do not name, or a
// README whose "May import" line drifted from them, fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module shared with eslint.config.js, without type declarations.
import { FOLDERS, LAYERS, ROOT_LAYERS, SUBLAYERS } from '../../scripts/layers.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const layers = LAYERS as Record<string, string[]>;
const folders = FOLDERS as string[];
const isDir = (path: string) => statSync(path).isDirectory();
const topFolders = readdirSync(SRC).filter((name) => isDir(join(SRC, name)));

/** The paragraph of a README that starts with "May import" (bold or not), up to the blank line. */
function mayImportParagraph(readme: string): string {
  const start = readme.search(/^\**May import\**:?/m);
  if (start < 0) return '';
  const end = readme.indexOf('\n\n', start);
  return readme.slice(start, end < 0 ? undefined : end);
}

/**
 * The parts of src/ a paragraph allows (`../store`, `store/types.ts`, `../errors.ts`…): those named
 * before its first "never" (what follows says what it may not import).
 */
function namedParts(paragraph: string): Set<string> {
  const named = new Set<string>();
  const allowing = paragraph.split(/\bnever\b/i)[0]!;
  for (const [, code] of allowing.matchAll(/`([^`]+)`/g)) {
    const path = code!.replace(/^(\.\.\/)+/, '').replace(/^src\//, '');
    const top = path.split('/')[0]!.replace(/\/$/, '');
    if (folders.includes(top) || top in ROOT_LAYERS) named.add(top);
  }
  return named;
}

const topOf = (entry: string) => entry.split('/')[0]!;

describe('import rules cover src/', () => {
  it('every top-level folder and root file has rules', () => {
    expect(topFolders.filter((f) => !folders.includes(f))).toEqual([]);
    const rootFiles = readdirSync(SRC).filter((name) => /\.tsx?$/.test(name));
    expect(rootFiles.filter((f) => !(f in ROOT_LAYERS))).toEqual([]);
  });

  it('every sub-folder with rules exists, and names only siblings that exist', () => {
    for (const [key, allowed] of Object.entries(SUBLAYERS as Record<string, string[]>)) {
      const [top, sub] = key.split('/') as [string, string];
      expect(isDir(join(SRC, top, sub)), key).toBe(true);
      for (const entry of allowed) expect(statSync(join(SRC, top, entry), { throwIfNoEntry: false }), `${key} → ${entry}`).toBeDefined();
    }
  });
});

describe("each folder's README says what the rules say", () => {
  for (const folder of Object.keys(layers)) {
    it(`src/${folder}/README.md "May import" names the same parts of src/ as LAYERS`, () => {
      const paragraph = mayImportParagraph(readFileSync(join(SRC, folder, 'README.md'), 'utf8'));
      expect(paragraph, `src/${folder}/README.md has no "May import" paragraph`).not.toBe('');
      const expected = new Set(layers[folder]!.map(topOf));
      const named = namedParts(paragraph);
      named.delete(folder);
      expect([...named].sort(), `src/${folder}/README.md`).toEqual([...expected].sort());
    });
  }
});

describe('sub-folders of more than five files say what they hold', () => {
  function subFolders(dir: string): string[] {
    return readdirSync(dir)
      .filter((name) => isDir(join(dir, name)) && name !== 'node_modules')
      .flatMap((name) => [join(dir, name), ...subFolders(join(dir, name))]);
  }
  for (const top of topFolders) {
    for (const dir of subFolders(join(SRC, top))) {
      const files = readdirSync(dir).filter((name) => !isDir(join(dir, name)));
      if (files.length <= 5) continue;
      const relative = dir.slice(SRC.length);
      it(`src/${relative} has a README.md`, () => {
        expect(files, `src/${relative} holds ${files.length} files and no README.md`).toContain('README.md');
      });
    }
  }
});
