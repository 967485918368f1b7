// What each part of src/ may import: read by eslint.config.js (an import against these fails
// `npm run check`) and by test/architecture/layers.test.ts (each folder's README says the same).
//
// LAYERS: per top-level folder, the folders ('store'), files of one ('store/types.ts': that file
// only) and files at src/ ('errors.ts') it may import. An arrow back up — a folder importing one
// it is beneath — is what these forbid. `roles` wires everything together and may import
// anything; nothing imports it but main.ts.
export const LAYERS = {
  common: [],
  // The settings' declarations and loader: the parts' defaults and parsers they take, nothing that runs.
  config: ['model', 'common', 'errors.ts', 'geo/default-db.ts', 'dns/server/tcp-limits.ts', 'dns/transfer/journal.ts', 'dns/transfer/notify-source.ts', 'dns/transfer/slots.ts', 'dns/signer/signature-cache.ts', 'store/redis/connection.ts'],
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

export const FOLDERS = [...Object.keys(LAYERS), 'roles'];

// The files at src/ and what each may import. config.ts is the entry of config/, which reads every
// part's settings: it sits above the parts whose defaults and parsers it takes (and below roles,
// which hands them out). log.ts takes its output format from config/logging.ts.
export const ROOT_LAYERS = {
  'errors.ts': [],
  'log.ts': ['common', 'config/logging.ts'],
  'config.ts': ['config'],
  'main.ts': ['config.ts', 'errors.ts', 'log.ts', 'roles'],
};
export const ROOT_FILES = Object.keys(ROOT_LAYERS);

// Inside a folder: which sibling sub-folders (or files of one) each sub-folder may import. A
// sub-folder of a folder listed here but missing from it may import none of its siblings; files
// directly in the folder (dns-server.ts, store/types.ts) are not limited by these.
export const SUBLAYERS = {
  // The query chain (src/dns/query-chain.ts): chain/ is the context and the stage shape every
  // stage folder builds on; a stage may read the codec, the zone index and the metrics, and the
  // cache the engine's location type, but no stage calls another: they meet in the context.
  'dns/wire': ['zone/types.ts'],
  'dns/zone': ['wire/constants.ts'],
  'dns/chain': ['wire', 'zone/types.ts'],
  'dns/metrics': ['chain', 'wire'],
  'dns/cookies': ['chain', 'metrics'],
  'dns/rate-limit': ['chain'],
  'dns/cache': ['chain', 'zone', 'wire', 'metrics', 'engine/types.ts'],
  'dns/engine': ['chain', 'wire', 'zone', 'metrics'],
  'dns/signer': ['chain', 'wire', 'zone', 'rate-limit'],
  'dns/transfer': ['chain', 'wire', 'zone'],
  'dns/server': ['chain', 'metrics', 'wire', 'zone'],
  // The two stores implement the contract's tests' subject; neither knows the other.
  'store/contract': [],
  'store/lmdb': [],
  'store/redis': [],
  'api/plugins': [],
  'api/routes': ['plugins'],
  'roles/supervisor': [],
  'roles/parts': ['supervisor'],
  'roles/dns-workers': ['supervisor'],
  'roles/edge-workers': ['supervisor'],
};

/** Packages only some folders speak to (the root files count as their own). */
export const PACKAGES = {
  ioredis: ['store'],
  lmdb: ['store', 'sync', 'edge'],
  fastify: ['api'],
  'fastify-plugin': ['api'],
  '@fastify': ['api'],
  ajv: ['api'],
  'ajv-formats': ['api'],
  yazl: ['api'],
  'acme-client': ['certs'],
  dns2: ['dns', 'ownership'],
  maxmind: ['geo'],
  tldts: ['model'],
  undici: ['edge'],
  'http-cache-semantics': ['edge'],
  preact: ['console'],
  uplot: ['console'],
};
