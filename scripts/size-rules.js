#!/usr/bin/env node
// The size bounds of src/: no file over 450 lines; no function over 80 lines (a nested function
// counts inside its parent too, and on its own) unless a comment before it starts
// `// Long on purpose:` and says why — for the rare loop that splitting would make worse to read.
// Functions are found by the TypeScript compiler's parser, so a method, an arrow function, a
// component and a route handler count like a declaration; a function's lines run from its first
// token (its comments not counted) to its last.
//
//   node scripts/size-rules.js    lists every file and function past its bound, longest first, and
//                                 exits 1 when there is any (0 and one line when there is none)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

export const MAX_FILE_LINES = 450;
export const MAX_FUNCTION_LINES = 80;
/** What a comment before a function starts with when its length is meant (the reason follows). */
export const LONG_ON_PURPOSE = '// Long on purpose:';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');

/** Lines as an editor numbers them: a final newline ends the last line, it starts none. */
function lineCount(text) {
  if (text === '') return 0;
  let lines = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** The name a reader finds the function by: its own, else the variable, property or call that holds it. */
function nameOf(node) {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

/**
 * Whether a comment before the function says it is long on purpose: one on the function itself,
 * or on what holds it up to its statement (`const run = () => …`, `app.get(…, async () => …)`, a
 * property of an object literal), with a reason after the colon.
 */
function longOnPurpose(node, text) {
  for (let at = node; at; at = at.parent) {
    for (const range of ts.getLeadingCommentRanges(text, at.getFullStart()) ?? []) {
      const comment = text.slice(range.pos, range.end);
      if (comment.startsWith(LONG_ON_PURPOSE) && comment.slice(LONG_ON_PURPOSE.length).trim() !== '') return true;
    }
    if (!at.parent || ts.isBlock(at.parent) || ts.isSourceFile(at.parent) || ts.isModuleBlock(at.parent) || ts.isClassLike(at.parent)) break;
  }
  return false;
}

/** What in one file is past its bound: `{ path, line, lines, what }`, `what` a file's or a function's name. */
export function sizeFindings(path, text) {
  const found = [];
  const lines = lineCount(text);
  if (lines > MAX_FILE_LINES) found.push({ path, line: 1, lines, what: 'file' });
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = end - start + 1;
      if (length > MAX_FUNCTION_LINES && !longOnPurpose(node, text)) found.push({ path, line: start + 1, lines: length, what: nameOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The TypeScript and JavaScript files under a folder. */
function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(?:[cm]?[jt]s|[jt]sx)$/.test(entry.name)) yield path;
  }
}

/** Every finding of src/, longest first. */
export function srcFindings() {
  const found = [];
  for (const path of sourceFiles(join(root, 'src'))) found.push(...sizeFindings(relative(root, path), readFileSync(path, 'utf8')));
  return found.sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path) || a.line - b.line);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const found = srcFindings();
  for (const f of found) {
    console.log(f.what === 'file' ? `${f.path}: ${f.lines} lines (at most ${MAX_FILE_LINES})` : `${f.path}:${f.line} ${f.what}: ${f.lines} lines (at most ${MAX_FUNCTION_LINES}, or a comment before it starting "${LONG_ON_PURPOSE}" says why)`);
  }
  if (found.length > 0) {
    console.log(`size rules: ${found.length} past their bound (no file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES})`);
    process.exitCode = 1;
  } else console.log(`size rules: every file of src/ within ${MAX_FILE_LINES} lines, every function within ${MAX_FUNCTION_LINES} or long on purpose`);
}
