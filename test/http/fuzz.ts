/**
 * `npm run fuzz`: the property-based hostile-input tests (test/http/hostile-routes-fuzz.slow.test.ts) for longer than
 * `npm test` runs them, with a new seed each time unless FUZZ_SEED is given. Prints the seed first, so
 * a failure can be replayed: `FUZZ_SEED=<seed> npm run fuzz`. FUZZ_RUNS sets the number of generated
 * requests (default 5 000; the raw-socket property runs a quarter as many), on each database: SQLite and
 * PostgreSQL, or only the one FUZZ_DATABASE names (`FUZZ_DATABASE=postgres npm run fuzz`).
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const seed = process.env.FUZZ_SEED ?? String(randomInt(1, 2 ** 31 - 1));
const runs = process.env.FUZZ_RUNS ?? '5000';
const database = process.env.FUZZ_DATABASE === undefined ? '' : `FUZZ_DATABASE=${process.env.FUZZ_DATABASE} `;
console.log(`fuzz seed=${seed} runs=${runs} (replay: ${database}FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npm run fuzz)`);
const result = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', 'test/http/hostile-routes-fuzz.slow.test.ts'],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, FUZZ_SEED: seed, FUZZ_RUNS: runs },
  },
);
console.log(`fuzz seed=${seed} runs=${runs}: ${result.status === 0 ? 'passed' : 'FAILED'}`);
process.exit(result.status ?? 1);
