// Architecture rules for src/, checked by dependency-cruiser (`npm run check:deps`, part of `npm test`).
// test/project/architecture-rules.test.ts runs these same rules against small fixture trees to prove that each of them bites.

// The folders of src/, lowest layer first. A folder may import from itself and from the folders listed
// before it, never from a folder listed after it (type-only imports count: a type is a dependency).
// A new top-level folder of src/ goes into this list, at its place, on purpose: until then its files are errors.
const layers = [
  'core',
  'json-path',
  'storage',
  'auth',
  'http',
  'console',
  'job-queue',
  'tables',
  'integrations',
  'mapping',
  'table-writer',
  'pagination',
  'rest-source',
  'webhooks',
  'from-sample',
  'bulk-import',
  'import-runs',
  'dashboard',
  'accounts',
  'declarative-config',
  'main',
  'cli',
];

/** A regular expression matching the files under any of the given top-level folders of src/. */
const inFolders = (folders) => `^src/(${folders.join('|')})/`;

// 1. Dependencies point down: one rule per layer, forbidding every layer above it.
const layerOrder = layers.slice(0, -1).map((layer, index) => ({
  name: 'layer-order',
  severity: 'error',
  comment: 'a folder of src/ imports only from itself and the folders before it in the layers of .dependency-cruiser.js',
  from: { path: inFolders([layer]) },
  to: { path: inFolders(layers.slice(index + 1)) },
}));

// 4. Every file of src/ is in one of the layers. A file elsewhere is reported whether it imports something,
//    is imported, or neither.
const notInALayer = 'not-in-a-layer';
const notInALayerComment = 'every file of src/ belongs to a folder listed in the layers of .dependency-cruiser.js';
const unlisted = { path: '^src/', pathNot: inFolders(layers) };
const everyFileInALayer = [
  { name: notInALayer, severity: 'error', comment: notInALayerComment, from: unlisted, to: {} },
  { name: notInALayer, severity: 'error', comment: notInALayerComment, from: { path: inFolders(layers) }, to: unlisted },
  { name: notInALayer, severity: 'error', comment: notInALayerComment, from: { ...unlisted, orphan: true }, to: {} },
];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerOrder,
    // 2. No import cycles between files anywhere in src/ (type-only imports included).
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'no import cycles between the files of src/',
      from: { path: '^src/' },
      to: { circular: true },
    },
    // 3. Dialect code stays apart (`(.*/|)` matches any depth of folders, none included).
    {
      name: 'sqlite-not-to-postgres',
      severity: 'error',
      comment: 'a file under a sqlite/ folder never imports a file under a postgres/ folder',
      from: { path: '^src/(.*/|)sqlite/' },
      to: { path: '^src/(.*/|)postgres/' },
    },
    {
      name: 'postgres-not-to-sqlite',
      severity: 'error',
      comment: 'a file under a postgres/ folder never imports a file under a sqlite/ folder',
      from: { path: '^src/(.*/|)postgres/' },
      to: { path: '^src/(.*/|)sqlite/' },
    },
    // 5. The database drivers, and with them their own statement styles (`?` prepared statements, `$1`
    //    queries), only where a database is opened or a dialect's own path runs: storage/, main/ and
    //    sqlite/ or postgres/ folders. Everywhere else SQL is Kysely's (`sql` templates, the query builder).
    {
      name: 'drivers-in-dialect-folders',
      severity: 'error',
      comment: 'better-sqlite3 and pg are imported only under src/storage/, src/main/ and sqlite/ or postgres/ folders',
      from: { path: '^src/', pathNot: ['^src/(storage|main)/', '^src/(.*/|)(sqlite|postgres)/'] },
      to: { path: '(^|/)node_modules/(@types/)?(better-sqlite3|pg)/' },
    },
    ...everyFileInALayer,
    // Guard for the rules above: an import the resolver cannot follow (e.g. a `.js` specifier that no longer
    // finds its `.ts` file) would silently escape them.
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'every import of src/ resolves to a file or package',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Parse the TypeScript sources before compilation, so that type-only imports are seen.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages as Node's ESM loader does, through package.json "exports" (typebox has nothing else).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
    },
    skipAnalysisNotInRules: true,
  },
};
