/**
 * Where a worker thread's entry module is. Compiled, it is the `.js` file beside the caller. Run from
 * sources (tests), it is the `.ts` file and needs tsx inside the thread: on Node 20 neither
 * `execArgv: ['--import', 'tsx']` nor tsx's main module registers in a worker thread, so a one-line
 * bootstrap calls tsx's ESM `register()` there (the file named by the `import` condition of tsx's
 * `./esm/api` export), then imports the entry.
 *
 * Compiling the sources in every thread costs 1–3 s of CPU per thread start, which a test suite pays
 * hundreds of times: a test run may bundle the entries once (esbuild, test/helpers/global-setup.ts)
 * into the directory `THREAD_ENTRY_BUNDLES` names, and threads started from sources then run those.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export function threadEntry(callerUrl: string, name: string): { filename: string | URL; eval: boolean } {
  // Asked from sources, or from a bundled thread (which starts the mapping thread in its turn).
  const bundles = process.env.THREAD_ENTRY_BUNDLES;
  if (bundles !== undefined && bundles !== '' && !callerUrl.endsWith('.js'))
    return { filename: pathToFileURL(path.join(bundles, `${name}.mjs`)), eval: false };
  if (!callerUrl.endsWith('.ts')) return { filename: new URL(`./${name}.js`, callerUrl), eval: false };
  const manifest = createRequire(callerUrl).resolve('tsx/package.json');
  const { exports } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { exports: { './esm/api': { import: { default: string } } } };
  const api = pathToFileURL(path.join(path.dirname(manifest), exports['./esm/api'].import.default)).href;
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  return {
    filename: `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
    eval: true,
  };
}
