// The architecture rules of .dependency-cruiser.js (the check `npm run check:deps` runs on src/) bite:
// run with the project's own configuration and tsconfig.json against small fixture trees, each with its own
// src/, they report exactly the violations planted in test/fixtures/architecture/violations and none in
// test/fixtures/architecture/clean.
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/architecture/${name}`, import.meta.url));

/** Cruises the src/ of a fixture tree as `npm run check:deps` cruises the project's. */
async function cruiseFixture(name: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(`${root}.dependency-cruiser.js`);
  const tsConfigFileName = `${root}tsconfig.json`;
  const { output } = await cruise(
    ['src'],
    { ...options, baseDir: fixture(name), tsConfig: { fileName: tsConfigFileName } },
    {},
    { tsConfig: extractTSConfig(tsConfigFileName) },
  );
  if (typeof output === 'string') throw new Error('expected the cruise result as an object');
  return output;
}

/** A package by its name: where its files lie depends on the machine. */
const packageName = (to: string) => to.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+)\/.*$/, '$1');

/** One line per violation: rule, from → to; a cycle is reported once, whole; an orphan from itself to itself. */
const violations = (result: ICruiseResult) =>
  result.summary.violations
    .map(
      (v) => `${v.rule.name}: ${v.cycle ? [v.from, ...v.cycle.map((step) => step.name)].join(' → ') : `${v.from} → ${packageName(v.to)}`}`,
    )
    .sort();

describe('architecture rules (.dependency-cruiser.js)', () => {
  it('report exactly the planted violations', async () => {
    const result = await cruiseFixture('violations');
    expect(violations(result)).toEqual(
      [
        // 1. Layer order, a type-only import included.
        'layer-order: src/storage/a.ts → src/http/b.ts',
        'layer-order: src/core/clock.ts → src/http/b.ts',
        // 2. A two-file cycle.
        'no-cycle: src/core/ping.ts → src/core/pong.ts → src/core/ping.ts',
        // 3. Dialects apart.
        'sqlite-not-to-postgres: src/table-writer/sqlite/writer.ts → src/table-writer/postgres/dialect.ts',
        // 4. Files outside the listed folders: importing, imported, and neither.
        'not-in-a-layer: src/reports/summary.ts → src/core/clock.ts',
        'not-in-a-layer: src/main/app.ts → src/reports/summary.ts',
        'not-in-a-layer: src/scratch.ts → src/scratch.ts',
        // 5. A database driver outside storage/, main/ and the dialect folders, a type-only import included.
        'drivers-in-dialect-folders: src/tables/raw-sql.ts → better-sqlite3',
        'drivers-in-dialect-folders: src/tables/raw-sql.ts → pg',
      ].sort(),
    );
    expect(result.summary.error).toBe(9);
  });

  it('report nothing on a tree that keeps them, whose `.js` imports all resolve to `.ts` files', async () => {
    const result = await cruiseFixture('clean');
    expect(violations(result)).toEqual([]);
    // Every import of the fixture was seen and followed: 8 files and one package, 13 imports (6 of them
    // type-only), all to .ts files but the one of the database driver, in a dialect folder of storage/.
    expect(result.summary.totalCruised).toBe(9);
    expect(result.summary.totalDependenciesCruised).toBe(13);
    const dependencies = result.modules.flatMap((m) => m.dependencies);
    const [packages, files] = [
      dependencies.filter((d) => d.module === 'better-sqlite3'),
      dependencies.filter((d) => d.module !== 'better-sqlite3'),
    ];
    expect(packages).toHaveLength(1);
    expect(files.every((d) => !d.couldNotResolve && d.resolved.endsWith('.ts'))).toBe(true);
    expect(dependencies.filter((d) => d.dependencyTypes.includes('type-only'))).toHaveLength(6);
  });
});
