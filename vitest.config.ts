import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects, chosen by file name: `*.slow.test.ts` is the `slow` project (a browser, spawned `ifw`
 * processes from the built bin/ifw.js, kill -9, scale-out, long property runs,
 * payloads of megabytes); every other
 * `*.test.ts` is `fast` (in-process, no build needed). `npm test` runs both; `npm run test:fast` and
 * `npm run test:slow` run one. Test files mirror src/: test/<src folder>/<behaviour>.test.ts.
 */
const SLOW = 'test/**/*.slow.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files mostly wait on databases, child processes and sockets, not on the CPU: at least two run
    // at once, so a 2-core machine is not left with one core idle (vitest's default is cores − 1).
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    allowOnly: false,
    // The transformed sources kept on disk between runs (node_modules/.experimental-vitest-cache, keyed by
    // their content): a second run of the edit loop transforms only what changed (fast project on 2
    // cores: transform 11.8 s → 2.9 s, wall 88 s → 81 s).
    experimental: { fsModuleCache: true },
    // Migrated SQLite and PostgreSQL templates, made once per run and copied by each test (test/helpers/databases.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, SLOW],
          // The files of a worker share its loaded modules instead of importing the service anew each
          // (about a second of CPU per file). No file leaves global state behind: none mocks a module,
          // stubs a global or sets an environment variable, and each restores real timers after faking them.
          isolate: false,
          // A fast file's own thread waits about half of its time (on PostgreSQL, the job queue's threads,
          // sockets): one file more than there are cores keeps the cores busy (measured on 2 cores: 83–85 s
          // with three at once against 90 s with two).
          maxWorkers: os.availableParallelism() + 1,
          // Projects of different maxWorkers run one after the other (vitest requires it): `npm test` runs
          // the fast files first, then the slow ones, which then do not share the machine with them.
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'slow', include: [SLOW], sequence: { groupOrder: 1 } } },
    ],
  },
});
