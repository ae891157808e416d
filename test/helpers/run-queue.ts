/**
 * The fixture of the import run queue tests: one paging server for the file, and per test a fresh
 * SQLite database holding table `item`, integration ITEMS, the connection to that server and the
 * endpoints asked for, with a manual clock, a secret box and a run context on it.
 */
import { afterAll, beforeAll } from 'vitest';
import type { ImportRunContext } from '../../src/import-runs/run-imports.js';
import type { EndpointInput } from '../../src/rest-source/schemas.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { openTestDatabase, type TestDatabase } from './db.js';
import { addEndpoint, runContext, setupItems, testBox, testClock, type ManualClock } from './import-fixtures.js';
import { startPagingServer, type PagingServer } from './paging-server.js';

/** Starts a paging server before the file's tests and closes it after them; the getter answers it. */
export function usePagingServer(): () => PagingServer {
  let server: PagingServer | undefined;
  beforeAll(async () => {
    server = await startPagingServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error('the paging server starts before the first test');
    return server;
  };
}

export interface RunQueue {
  readonly t: TestDatabase;
  readonly clock: ManualClock;
  readonly box: SecretBox;
  readonly ctx: ImportRunContext;
}

export interface RunQueueOptions {
  /** What the paging server serves from now on (default 95 records, pages of 10). */
  readonly records?: number;
  readonly pageSize?: number;
  /** `nameMaxLength` of table `item` (see itemTable). */
  readonly nameMaxLength?: number;
  /** Endpoints of the connection, by code. */
  readonly endpoints?: Readonly<Record<string, Partial<EndpointInput>>>;
}

/** Resets `server` and opens a fresh database set up for import runs from it; `t.cleanup()` removes it. */
export async function openRunQueue(server: PagingServer, options: RunQueueOptions = {}): Promise<RunQueue> {
  server.reset({ records: options.records ?? 95, pageSize: options.pageSize ?? 10 });
  const t = await openTestDatabase();
  const clock = testClock();
  const box = testBox();
  await setupItems(t.db, clock, box, server.origin, options.nameMaxLength === undefined ? {} : { nameMaxLength: options.nameMaxLength });
  for (const [code, settings] of Object.entries(options.endpoints ?? {})) await addEndpoint(t.db, clock, code, settings);
  return { t, clock, box, ctx: runContext(t.db, clock, box) };
}
