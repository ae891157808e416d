/** `ifw run-endpoint <code>`: runs the import in its own process and connection, prints the run as JSON. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { addEndpoint, ENDPOINTS, itemIds, range, setupItems, testBox, testClock } from '../helpers/import-fixtures.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { ROOT } from '../helpers/process.js';

let server: PagingServer;
let t: TestDatabase;

beforeAll(async () => {
  server = await startPagingServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.reset({ records: 25, pageSize: 10 });
  t = await openTestDatabase();
  const clock = testClock();
  await setupItems(t.db, clock, testBox(), server.origin);
  await addEndpoint(t.db, clock, 'numbered', ENDPOINTS.pageNumber);
});
afterEach(async () => {
  await t.cleanup();
});

/** The CLI from sources (no build needed), as `ifw run-endpoint <code> --data-dir <dir>`. */
function runEndpointCli(code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = ['--import', 'tsx', path.join(ROOT, 'src/cli/main.ts'), 'run-endpoint', code, '--data-dir', t.dir];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, IFW_SECRET_KEY: 'import-run-tests', IFW_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('exit', (exitCode) => resolve({ code: exitCode, stdout, stderr })));
}

describe('ifw run-endpoint', () => {
  it('imports every page, prints the Completed run as JSON and exits 0', async () => {
    const { code, stdout, stderr } = await runEndpointCli('numbered');

    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      endpointCode: 'numbered',
      trigger: 'manual',
      status: 'Completed',
      pagesFetched: 3,
      recordsFetched: 25,
      insertedCount: 25,
    });
    expect(itemIds(t.db)).toEqual(range(1, 25));
  });

  it('prints the Failed run and exits 1 when a page fails', async () => {
    server.setFaults([{ kind: 'malformedJson', page: 2 }]);

    const { code, stdout } = await runEndpointCli('numbered');

    expect(code).toBe(1);
    const run = JSON.parse(stdout);
    expect(run).toMatchObject({ status: 'Failed', pagesFetched: 1 });
    expect(run.errorMessage).toContain('page 2');
    expect(itemIds(t.db)).toEqual([]);
  });

  it('exits 1 with a message for an unknown endpoint', async () => {
    const { code, stdout, stderr } = await runEndpointCli('nope');
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain("No REST API endpoint with code 'nope'.");
  });
});
