// Lint rules: typescript-eslint's recommended set, type-aware where it catches real bugs
// (floating promises crash servers; misused promises hide errors).
import tseslint from 'typescript-eslint';

// What each src/ folder may import (its README says the same, and why). An arrow back up — a
// folder importing one it is beneath — fails `npm run check`. Entries are top-level folders
// ('store'), files of one ('store/types.ts': that file only), or files at src/ ('errors.ts').
// `roles` wires everything together and may import anything; nothing imports it but main.ts.
const LAYERS = {
  common: [],
  model: ['errors.ts', 'common'],
  geo: ['model', 'common'],
  store: ['model', 'common', 'errors.ts'],
  uptime: ['model', 'store', 'common', 'errors.ts'],
  ownership: ['model', 'store', 'common', 'config.ts', 'errors.ts'],
  certs: ['model', 'store', 'common', 'config.ts', 'errors.ts'],
  sync: ['model', 'store', 'dns/zone', 'common', 'errors.ts'],
  notify: ['model', 'store', 'uptime', 'ownership', 'sync/notifier.ts', 'common', 'errors.ts'],
  zonefile: ['model', 'store/types.ts', 'store/contract', 'errors.ts'],
  console: [],
  dns: ['model', 'geo', 'store/types.ts', 'store/contract', 'common', 'errors.ts'],
  edge: ['model', 'geo', 'store/types.ts', 'store/contract', 'sync', 'uptime', 'common', 'errors.ts'],
  api: ['model', 'store', 'sync', 'certs', 'notify', 'uptime', 'ownership', 'geo', 'zonefile', 'common', 'config.ts', 'errors.ts', 'log.ts'],
  cli: ['model', 'store', 'certs', 'notify', 'ownership', 'zonefile', 'dns/transfer/secondaries.ts', 'dns/transfer/tsig.ts', 'common', 'config.ts', 'errors.ts', 'log.ts'],
};
const FOLDERS = [...Object.keys(LAYERS), 'roles'];
const ROOT_FILES = ['config.ts', 'errors.ts', 'log.ts', 'main.ts'];
/** Packages only one folder speaks to. */
const PACKAGES = { ioredis: ['store'], lmdb: ['store', 'sync', 'edge'], fastify: ['api'], '@fastify': ['api'] };
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

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
  return { files: [`src/${folder}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

/**
 * A sub-folder's own bound inside its layer: the folder's layer patterns and its own (a later config
 * object replaces a rule's options whole, so the layer's are carried along).
 */
function subfolderRules(folder, sub, except, patterns) {
  const layer = importRules(folder).rules['no-restricted-imports'][1].patterns;
  return { files: [`src/${folder}/${sub}/**/*.ts`], ignores: except.map((file) => `src/${folder}/${sub}/${file}`), rules: { 'no-restricted-imports': ['error', { patterns: [...layer, ...patterns] }] } };
}

const WAF_MESSAGE = 'src/edge/waf may import only its own files, model/, lru-cache and node: built-ins; only stages.ts reaches the rest of the edge (see src/edge/waf/README.md).';

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
  ...Object.keys(LAYERS).map(importRules),
  subfolderRules('edge', 'waf', ['stages.ts'], [
    { regex: '^\\.\\./(?!\\.\\./)', message: WAF_MESSAGE },
    { regex: '^\\.\\./\\.\\./(?!model/)', message: WAF_MESSAGE },
  ]),
  {
    // Tests read JSON answers of many shapes; typing each would add noise, not safety.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
