import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files mostly wait on databases, child processes and sockets, not on the CPU: at least two run
    // at once, so a 2-core machine is not left with one core idle (vitest's default is cores − 1).
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    allowOnly: false,
  },
});
