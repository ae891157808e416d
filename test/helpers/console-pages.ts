/**
 * Console pages in-process, without a browser: a whole service on port 0 (the example config applied,
 * no workers), a SUPER user signed in through the login form, and rows seeded straight into the
 * database for the states a page shows (a Failed request, a completed run).
 */
import { randomUUID } from 'node:crypto';
import type { PermissionSetName } from '../../src/auth/permission-sets.js';
import { signInHttp, type Browserless } from './console-http.js';
import { insertRequest } from './queue-fixtures.js';
import { startTestService, type TestService } from './service.js';

const PASSWORD = 'console-pages-pass-1';

export interface ConsolePages {
  readonly t: TestService;
  readonly base: string;
  /** Signed in as a user holding `set` (created on first use). */
  as(set: PermissionSetName): Promise<Browserless>;
  cleanup(): Promise<void>;
}

export async function startConsolePages(): Promise<ConsolePages> {
  const t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
  const base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  const clients = new Map<PermissionSetName, Browserless>();
  return {
    t,
    base,
    async as(set) {
      let client = clients.get(set);
      if (client === undefined) {
        const userName = `pages-${set.toLowerCase().replace(/ /g, '-')}`;
        await t.service.accounts.createUser({ userName, password: PASSWORD, permissionSets: [set] });
        client = await signInHttp(base, userName, PASSWORD);
        clients.set(set, client);
      }
      return client;
    },
    cleanup: () => t.cleanup(),
  };
}

export interface SeededRequest {
  readonly status?: string;
  readonly submittedAt?: string;
  readonly submittedBy?: string | null;
  readonly integrationSortingOrder?: number;
}

/** A request row as the processor leaves it (Completed, Failed) or as submitted (Pending). */
export async function seedRequest(t: TestService, seed: SeededRequest = {}): Promise<string> {
  const now = new Date().toISOString();
  const status = seed.status ?? 'Pending';
  const ended = status === 'Completed' || status === 'Failed' || status === 'Cancelled';
  const id = await insertRequest(t.service.db, {
    submittedAt: seed.submittedAt ?? now,
    status,
    ...(seed.integrationSortingOrder === undefined ? {} : { integrationSortingOrder: seed.integrationSortingOrder }),
    ...(ended ? { endedAt: now } : {}),
  });
  await t.service.db.kysely
    .updateTable('ifw_bulk_import_request')
    .set({ submitted_by: seed.submittedBy ?? null, ...(ended ? { processed_at: now } : {}) })
    .where('request_id', '=', id)
    .execute();
  return id;
}

export interface SeededRun {
  readonly status?: string;
  readonly integrationSortingOrder?: number;
  readonly endpointCode?: string;
  readonly inserted?: number;
  readonly updated?: number;
  readonly endedAt?: string;
}

/** An import run row: by default Completed now, through integration 10, with 0 records. */
export async function seedRun(t: TestService, seed: SeededRun = {}): Promise<string> {
  const runId = randomUUID();
  const now = new Date().toISOString();
  const status = seed.status ?? 'Completed';
  await t.service.db.kysely
    .insertInto('ifw_import_run')
    .values({
      run_id: runId,
      endpoint_code: seed.endpointCode ?? 'contacts',
      integration_sorting_order: seed.integrationSortingOrder ?? 10,
      trigger: 'manual',
      status,
      queued_at: now,
      started_at: now,
      ended_at: status === 'Completed' || status === 'Failed' ? (seed.endedAt ?? now) : null,
      inserted_count: seed.inserted ?? 0,
      updated_count: seed.updated ?? 0,
    })
    .execute();
  return runId;
}
