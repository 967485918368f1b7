// Lint rules: typescript-eslint's recommended set, type-aware where it catches real bugs
// (floating promises crash servers; misused promises hide errors).
import tseslint from 'typescript-eslint';

import { FOLDERS, LAYERS, PACKAGES, ROOT_FILES, ROOT_LAYERS, SUBLAYERS } from './scripts/layers.js';

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const SOURCES = (dir) => [`${dir}/**/*.ts`, `${dir}/**/*.tsx`];

function importRules(folder) {
  const allowed = LAYERS[folder];
  const patterns = [];
  const message = `src/${folder} may import only ${allowed.join(', ') || 'node: built-ins'} (see src/${folder}/README.md): an import the other way runs back up the layers.`;
  for (const other of FOLDERS) {
    if (other === folder) continue;
    const parts = allowed.filter((a) => a.startsWith(`${other}/`)).map((a) => a.slice(other.length + 1));
    if (allowed.includes(other)) continue;
    // A relative import that climbs to src/ and enters `other`, except through the files allowed.
    const except = parts.length === 0 ? '' : `(?!(${parts.map(escape).join('|')})(/|$))`;
    patterns.push({ regex: `^(\\.\\./)+${escape(other)}/${except}`, message });
  }
  for (const file of ROOT_FILES) {
    if (!allowed.includes(file)) patterns.push({ regex: `^(\\.\\./)+${escape(file)}$`, message });
  }
  for (const [pkg, users] of Object.entries(PACKAGES)) {
    if (!users.includes(folder)) patterns.push({ regex: `^${escape(pkg)}(/|$)`, message: `${pkg} is spoken to only in src/${users.join(', src/')}.` });
  }
  return patterns;
}

/** A folder's rules; its sub-folders with a SUBLAYERS entry get these plus their siblings' rules. */
function folderConfigs(folder) {
  const patterns = importRules(folder);
  const configs = [{ files: SOURCES(`src/${folder}`), rules: { 'no-restricted-imports': ['error', { patterns }] } }];
  const siblings = Object.keys(SUBLAYERS).filter((key) => key.startsWith(`${folder}/`)).map((key) => key.slice(folder.length + 1));
  for (const sub of siblings) {
    const allowed = SUBLAYERS[`${folder}/${sub}`];
    const message = `src/${folder}/${sub} may import only ${allowed.join(', ') || 'none'} of src/${folder}'s sub-folders (SUBLAYERS in scripts/layers.js, and src/${folder}/README.md).`;
    const own = [];
    for (const other of siblings) {
      if (other === sub || allowed.includes(other)) continue;
      const files = allowed.filter((a) => a.startsWith(`${other}/`)).map((a) => a.slice(other.length + 1));
      const except = files.length === 0 ? '' : `(?!(${files.map(escape).join('|')})$)`;
      own.push({ regex: `^\\.\\./${escape(other)}/${except}`, message });
    }
    // Later configs replace a rule's options for the files they match: the folder's own patterns are repeated.
    configs.push({ files: SOURCES(`src/${folder}/${sub}`), rules: { 'no-restricted-imports': ['error', { patterns: [...patterns, ...own] }] } });
  }
  return configs;
}

/** A file at src/: imports start with ./ . */
function rootFileConfig(file) {
  const allowed = ROOT_LAYERS[file];
  const message = `src/${file} may import only ${allowed.join(', ') || 'node: built-ins and packages'} (ROOT_LAYERS in scripts/layers.js).`;
  const patterns = [];
  for (const other of FOLDERS) {
    if (allowed.includes(other)) continue;
    const files = allowed.filter((a) => a.startsWith(`${other}/`)).map((a) => a.slice(other.length + 1));
    const except = files.length === 0 ? '' : `(?!(${files.map(escape).join('|')})$)`;
    patterns.push({ regex: `^\\./${escape(other)}/${except}`, message });
  }
  for (const root of ROOT_FILES) {
    if (root !== file && !allowed.includes(root)) patterns.push({ regex: `^\\./${escape(root)}$`, message });
  }
  return { files: [`src/${file}`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

/**
 * A sub-folder's own bound inside its layer: the folder's layer patterns and its own (a later config
 * object replaces a rule's options whole, so the layer's are carried along).
 */
function subfolderRules(folder, sub, except, patterns) {
  const layer = importRules(folder);
  return { files: SOURCES(`src/${folder}/${sub}`), ignores: except.map((file) => `src/${folder}/${sub}/${file}`), rules: { 'no-restricted-imports': ['error', { patterns: [...layer, ...patterns] }] } };
}

const WAF_MESSAGE = 'src/edge/waf may import only its own files, model/, lru-cache (through ../lru-by-count.ts) and node: built-ins; only stages.ts reaches the rest of the edge (see src/edge/waf/README.md).';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...Object.keys(LAYERS).flatMap(folderConfigs),
  ...Object.keys(ROOT_LAYERS).map(rootFileConfig),
  subfolderRules('edge', 'waf', ['stages.ts'], [
    { regex: '^\\.\\./(?!\\.\\./|lru-by-count\\.ts$)', message: WAF_MESSAGE },
    { regex: '^\\.\\./\\.\\./(?!model/)', message: WAF_MESSAGE },
  ]),
  {
    // Tests read JSON answers of many shapes; typing each would add noise, not safety.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
