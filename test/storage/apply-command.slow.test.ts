/**
 * The storage contract, for `ifw apply` as a process (the built bin/ifw.js): against a real SQLite file
 * and the real PostgreSQL server, each in a database of its own, it applies examples/customers.yaml to a
 * new database and then finds everything unchanged. The rest of the contract is in storage-contract.test.ts.
 */
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { applyConfigFile } from '../../src/declarative-config/apply.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { sqlTableExists } from '../../src/tables/ddl.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { assertBuilt, runIfw } from '../helpers/process.js';
import { EXAMPLE_CONFIG } from '../helpers/service.js';

const openUrl = (url: string): Database => openDatabase(parseDatabaseUrl(url, os.tmpdir()));

describe.each(BACKENDS)('storage contract on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    describe('ifw apply', () => {
      let fresh: FreshDatabase;
      let dataDir: string;
      beforeAll(async () => {
        assertBuilt();
        fresh = await backend.fresh();
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-contract-apply-'));
      });
      afterAll(async () => {
        await fresh?.cleanup();
        if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true });
      });

      it('applies examples/customers.yaml to a new database, then finds everything unchanged', async () => {
        const env = { IFW_DATABASE_URL: fresh.url, IFW_DATA_DIR: dataDir, IFW_LOG_LEVEL: 'silent' };
        const first = await runIfw(['apply', EXAMPLE_CONFIG], env);
        expect(first.stderr).toBe('');
        expect(first.code).toBe(0);
        const report = JSON.parse(first.stdout) as { summary: { created: number; updated: number } };
        expect(report.summary.created).toBeGreaterThan(0);
        const second = await runIfw(['apply', EXAMPLE_CONFIG], env);
        expect(second.code).toBe(0);
        expect(JSON.parse(second.stdout)).toMatchObject({ summary: { created: 0, updated: 0 } });

        // The same through the function the API server uses at start (`ifw serve --apply`).
        const db = openUrl(fresh.url);
        try {
          expect((await applyConfigFile(db, EXAMPLE_CONFIG, systemClock)).summary).toMatchObject({ created: 0, updated: 0 });
          expect((await sqlTableExists('customer', db.dialect).execute(db.kysely)).rows).toHaveLength(1);
        } finally {
          await db.close();
        }
      });
    });
  });
});
