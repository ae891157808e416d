import fs from 'node:fs';
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

/** The projects named on the command line (`--project fast`, `--project=fast`). */
const namedProjects = process.argv.flatMap((arg, i) =>
  arg === '--project' ? [process.argv[i + 1]] : arg.startsWith('--project=') ? [arg.slice('--project='.length)] : [],
);

/**
 * The tests' scratch files (SQLite databases, key files, payloads: everything under `os.tmpdir()`) go
 * to a memory-backed directory when the machine has one with room and TMPDIR does not name another.
 * An fsync there returns at once, where the disk takes most of a millisecond for each commit and each
 * close of a SQLite file; the fast project commits some thousand times. The files are real files all
 * the same, and no test is about surviving a power loss (the crash tests kill processes, which tmpfs
 * survives as a disk does). The test processes inherit the variable, and so do the processes they start.
 */
const MEMORY_TMP = '/dev/shm';
const MEMORY_TMP_ROOM = 4 * 1024 ** 3;
function hasRoom(dir: string): boolean {
  try {
    const stats = fs.statfsSync(dir);
    return stats.bavail * stats.bsize >= MEMORY_TMP_ROOM;
  } catch {
    return false;
  }
}
if (process.env.TMPDIR === undefined && hasRoom(MEMORY_TMP)) process.env.TMPDIR = MEMORY_TMP;

/**
 * Test files mostly wait on databases, threads, child processes and sockets, not on the CPU: at least
 * two run at once, so that a 2-core machine is not left with one core idle (vitest's default is cores −
 * 1). The fast project alone (`npm run test:fast`) runs one file more than there are cores: a fast
 * file's own thread waits about half of its time (on 2 cores: 83–85 s with three at once, 90 s with
 * two). The slow project's scale-out and browser tests miss their deadlines at three on 2 cores, and
 * vitest would run projects of different `maxWorkers` one after the other, so only a run of the fast
 * project alone takes the extra one: `npm test` runs as before, two at once, its projects interleaved.
 */
const FAST_ONLY = namedProjects.length === 1 && namedProjects[0] === 'fast';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: FAST_ONLY ? os.availableParallelism() + 1 : Math.max(2, os.availableParallelism() - 1),
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
        },
      },
      { extends: true, test: { name: 'slow', include: [SLOW] } },
    ],
  },
});
