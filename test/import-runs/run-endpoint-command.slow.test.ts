/**
 * The import run contract, for `ifw run-endpoint <code>` as a process (the built bin/ifw.js): against a
 * real SQLite file and a fresh PostgreSQL database, the run imports every record and prints the
 * Completed run, and a page that fails fails the run with nothing imported. The rest of the contract,
 * in process, is in import-runs-contract.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/core/config.js';
import type { ImportRun } from '../../src/import-runs/model.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { addEndpoint, ENDPOINTS, range, setupItems, testBox, testClock } from '../helpers/import-fixtures.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { assertBuilt, runIfw } from '../helpers/process.js';

const SECRET_KEY = 'import-run-tests';

let server: PagingServer;

beforeAll(async () => {
  server = await startPagingServer();
});
afterAll(async () => {
  await server.close();
});

describe.each(BACKENDS)('import runs on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let db: Database;
    let dir: string;

    beforeEach(async () => {
      server.reset({ records: 25, pageSize: 10 });
      fresh = await backend.fresh();
      db = openDatabase(parseDatabaseUrl(fresh.url, os.tmpdir(), 2));
      await migrate(db);
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-runs-contract-'));
      const clock = testClock();
      await setupItems(db, clock, testBox(), server.origin);
      await addEndpoint(db, clock, 'numbered', ENDPOINTS.pageNumber);
    });
    afterEach(async () => {
      await db?.close();
      await fresh?.cleanup();
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    });

    const itemIds = async (): Promise<number[]> =>
      (await sql<{ id: number }>`select id from item order by id`.execute(db.kysely)).rows.map((r) => Number(r.id));

    it('`ifw run-endpoint <code>` runs the import in its own process and prints the Completed run', async () => {
      assertBuilt();
      const env = { IFW_DATABASE_URL: fresh.url, IFW_SECRET_KEY: SECRET_KEY, IFW_LOG_LEVEL: 'warn' };

      const done = await runIfw(['run-endpoint', 'numbered', '--data-dir', dir], env, { timeoutMs: 60_000 });

      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({
        endpointCode: 'numbered',
        trigger: 'manual',
        status: 'Completed',
        pagesFetched: 3,
        recordsFetched: 25,
        insertedCount: 25,
      });
      expect(await itemIds()).toEqual(range(1, 25));

      server.setFaults([{ kind: 'malformedJson', page: 2 }]);
      const failed = await runIfw(['run-endpoint', 'numbered', '--data-dir', dir], env, { timeoutMs: 60_000 });
      expect(failed.code).toBe(1);
      const run = JSON.parse(failed.stdout) as ImportRun;
      expect(run).toMatchObject({ status: 'Failed', pagesFetched: 1, insertedCount: 0 });
      expect(run.errorMessage).toContain('page 2');
    }, 60_000);
  });
});
