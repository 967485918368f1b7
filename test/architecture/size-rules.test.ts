// The size rules (scripts/size-rules.js) on sources made to sit at their bounds: a file of 450
// lines and a function of 80 pass, one more line fails; a nested function counts in its parent;
// only a comment starting "// Long on purpose:" with a reason lets a long function stand.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module run by node, without type declarations.
import { sizeFindings } from '../../scripts/size-rules.js';

interface Finding {
  path: string;
  line: number;
  lines: number;
  what: string;
}
const findings = (path: string, text: string) => sizeFindings(path, text) as Finding[];

/** A function declaration of exactly `lines` lines. */
const fn = (name: string, lines: number, indent = '') => [`${indent}function ${name}() {`, ...Array.from({ length: lines - 2 }, (_, i) => `${indent}  void ${i};`), `${indent}}`].join('\n');

describe('size rules', () => {
  it('counts a file by its lines, a final newline starting none', () => {
    const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `export const x${i} = ${i};`).join('\n')}\n`;
    expect(findings('a.ts', lines(450))).toEqual([]);
    expect(findings('a.ts', lines(451))).toEqual([{ path: 'a.ts', line: 1, lines: 451, what: 'file' }]);
  });

  it('lets a function of 80 lines pass and one of 81 fail, wherever it starts', () => {
    expect(findings('a.ts', fn('short', 80))).toEqual([]);
    expect(findings('a.ts', `// a comment\n\n${fn('long', 81)}`)).toEqual([{ path: 'a.ts', line: 3, lines: 81, what: 'long' }]);
  });

  it('counts arrow functions, methods and components, named by what holds them', () => {
    const body = Array.from({ length: 79 }, (_, i) => `  void ${i};`).join('\n');
    const text = [`export const run = () => {\n${body}\n};`, `class A {\n  method() {\n${body}\n  }\n}`, `app.get('/x', async () => {\n${body}\n});`].join('\n');
    expect(findings('a.ts', text).map((f) => f.what)).toEqual(['run', 'method', "(callback of app.get)"]);
    const component = `export function Page() {\n  return (\n    <ul>\n${Array.from({ length: 78 }, (_, i) => `      <li>${i}</li>`).join('\n')}\n    </ul>\n  );\n}\n`;
    expect(findings('a.tsx', component)).toEqual([{ path: 'a.tsx', line: 1, lines: 84, what: 'Page' }]);
  });

  it('counts a nested function inside its parent, and on its own', () => {
    const text = `function outer() {\n${fn('inner', 79, '  ')}\n  return inner;\n}`;
    expect(findings('a.ts', text)).toEqual([{ path: 'a.ts', line: 1, lines: 82, what: 'outer' }]);
    const deeper = `function outer() {\n${fn('inner', 81, '  ')}\n}`;
    expect(findings('a.ts', deeper).map((f) => f.what)).toEqual(['outer', 'inner']);
  });

  it('lets a long function stand only with a comment before it that starts "// Long on purpose:" and says why', () => {
    const why = '// Long on purpose: one loop over the characters.\n';
    expect(findings('a.ts', `${why}${fn('loop', 120)}`)).toEqual([]);
    // After its documentation, or on the statement that holds it.
    expect(findings('a.ts', `/** Reads. */\n${why}${fn('loop', 120)}`)).toEqual([]);
    expect(findings('a.ts', `${why}export const loop = function () {\n${Array.from({ length: 100 }, () => '  void 0;').join('\n')}\n};`)).toEqual([]);
    // Without a reason, in other words, or inside the function: no.
    expect(findings('a.ts', `// Long on purpose:\n${fn('loop', 120)}`)).toHaveLength(1);
    expect(findings('a.ts', `// Long because it is.\n${fn('loop', 120)}`)).toHaveLength(1);
    expect(findings('a.ts', `/* Long on purpose: a block comment */\n${fn('loop', 120)}`)).toHaveLength(1);
    // A comment on a statement holds for the functions of that statement, not for those nested deeper in a block.
    const nested = `${why}function outer() {\n${fn('inner', 90, '  ')}\n}`;
    expect(findings('a.ts', nested).map((f) => f.what)).toEqual(['inner']);
  });
});
