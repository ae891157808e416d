/**
 * kill -9 while requests are being submitted and processed, large payloads among them (streamed in and
 * stored in chunks). After a restart: every request that got a 202 exists, holds all of its payload's
 * chunks and reaches a terminal state, each Completed request's records are in the target table
 * exactly once, and no Failed request left rows behind.
 */
import BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, basicAuth, runIfw, startServer, waitUntilDrained, type ServerProcess } from '../helpers/process.js';

const API = '/api/vendor/integrationFramework/v1.0';
/**
 * Most requests are small; every fifth is large (about 4 MB: streamed, stored in 1 MB chunks), so that
 * a kill lands while one is arriving or being imported.
 */
const LARGE = 80_000;
const recordsFor = (requestNo: number) => (requestNo % 5 === 1 ? LARGE : 400);
let dir: string;
let env: NodeJS.ProcessEnv;
/** The administrator the first start creates (IFW_ADMIN_PASSWORD); the service verifies its password once per process. */
const ADMIN_PASSWORD = 'crash-test-administrator';
const admin = basicAuth('admin', ADMIN_PASSWORD);

const config = `
targetTables:
  - name: crash_row
    primaryKey: [key]
    fields:
      - { name: key, type: code, maxLength: 40 }
      - { name: request_no, type: integer, required: true }
      - { name: amount, type: decimal }
integrations:
  - sortingOrder: 40
    name: Crash test rows
    type: file
    targetTable: crash_row
    acceptBulkImportRequests: true
    writeMode: insert
    fields:
      - { fieldNo: 1, title: Key, sourcePath: key, columnType: standard }
      - { fieldNo: 2, title: Request, sourcePath: request, columnType: standard }
      - { fieldNo: 3, title: Amount, sourcePath: amount, columnType: standard }
    mappings:
      - { fieldNo: 1, targetField: key }
      - { fieldNo: 2, targetField: request_no, required: true }
      - { fieldNo: 3, targetField: amount }
`;

interface Sent {
  requestId: string;
  requestNo: number;
  bad: boolean;
}

function payloadFor(requestNo: number, bad: boolean): string {
  const count = recordsFor(requestNo);
  const records = Array.from({ length: count }, (_, i) => ({
    key: `R${requestNo}-${i}`,
    request: requestNo,
    amount: bad && i === count - 1 ? 'not a number' : i * 1.5,
  }));
  return JSON.stringify(records);
}

/** Large submissions whose body is being sent right now. */
let largeInFlight = 0;

/** Clients submitting concurrently until the server goes away or `until` passes. */
async function submitWhileRunning(server: ServerProcess, firstNo: number, until: number, sent: Sent[]): Promise<void> {
  let next = firstNo;
  const client = async () => {
    while (Date.now() < until) {
      const requestNo = next++;
      const bad = requestNo % 7 === 0;
      const large = recordsFor(requestNo) === LARGE;
      let refused: string | undefined;
      if (large) largeInFlight++;
      try {
        const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...admin },
          body: JSON.stringify({ integrationSortingOrder: 40, payload: payloadFor(requestNo, bad) }),
        });
        if (res.status === 401 || res.status === 403) refused = `submit answered ${res.status}: ${await res.text()}`;
        else if (res.status === 202) sent.push({ requestId: ((await res.json()) as { requestId: string }).requestId, requestNo, bad });
      } catch {
        return; // the server was killed
      } finally {
        if (large) largeInFlight--;
      }
      // Credentials refused would make every later assertion vacuous: fail loudly instead.
      if (refused !== undefined) throw new Error(refused);
    }
  };
  await Promise.all(Array.from({ length: 4 }, client));
}

beforeAll(async () => {
  assertBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-crash-'));
  env = {
    IFW_DATA_DIR: dir,
    IFW_ADMIN_PASSWORD: ADMIN_PASSWORD,
    IFW_LEASE_SECONDS: '1',
    IFW_SCHEDULER_TICK_MS: '50',
    IFW_LOG_LEVEL: 'info',
    IFW_MAX_ATTEMPTS: '5',
  };
  fs.writeFileSync(path.join(dir, 'crash.yaml'), config);
  const applied = await runIfw(['apply', path.join(dir, 'crash.yaml')], env);
  expect(applied.code, applied.stderr).toBe(0);
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('kill -9 during submission and processing', () => {
  it('loses no accepted request and imports each Completed request exactly once', async () => {
    const sent: Sent[] = [];
    let processingAtKill = 0;
    let largeInFlightAtKill = 0;
    for (let cycle = 0; cycle < 3; cycle++) {
      const server = await startServer(env);
      const acceptedBefore = sent.length;
      const submitting = submitWhileRunning(server, cycle * 100_000, Date.now() + 20_000, sent);
      // Kill the moment a request is being imported, once this start has accepted a few submissions
      // (more in each cycle, so that the kills land at different points), as a crash would.
      const warmedUp = (): boolean => sent.length - acceptedBefore >= 5 + cycle * 3;
      const db = new BetterSqlite3(path.join(dir, 'ifw.db'), { readonly: true });
      const processing = db.prepare("select count(*) as n from ifw_bulk_import_request where status = 'Processing'");
      const giveUp = Date.now() + 10_000;
      for (;;) {
        const n = (processing.get() as { n: number }).n;
        // The first kill waits for a large payload on its way in as well.
        if ((n > 0 && warmedUp() && (cycle > 0 || largeInFlight > 0)) || Date.now() > giveUp) {
          server.child.kill('SIGKILL');
          processingAtKill += n;
          largeInFlightAtKill += largeInFlight;
          break;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
      db.close();
      await submitting;
      await server.stop();
    }
    expect(sent.length).toBeGreaterThan(10);

    // Restart and let the queue finish everything, including requests whose lease the kill left behind.
    const server = await startServer(env);
    try {
      const count = async (status: string) => {
        const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests?$filter=${encodeURIComponent(`status eq '${status}'`)}`, {
          headers: admin,
        });
        if (res.status !== 200) throw new Error(`listing ${status} requests answered ${res.status}: ${await res.text()}`);
        return ((await res.json()) as { value: unknown[] }).value.length;
      };
      await waitUntilDrained(
        async () => ({ Pending: await count('Pending'), Processing: await count('Processing') }),
        30_000,
        () => server.logs.slice(-20).join('\n'),
      );

      const db = new BetterSqlite3(path.join(dir, 'ifw.db'), { readonly: true });
      const statusOf = db.prepare('select status, record_count, error_message from ifw_bulk_import_request where request_id = ?');
      // Every stored request holds all of its payload: as many chunks as it says, or the payload inline.
      const incomplete = db
        .prepare(
          `select r.request_id, r.payload_chunks, (select count(*) from ifw_bulk_import_payload_chunk c where c.request_id = r.request_id) as chunks
             from ifw_bulk_import_request r
            where r.payload_chunks <> (select count(*) from ifw_bulk_import_payload_chunk c where c.request_id = r.request_id)`,
        )
        .all();
      expect(incomplete).toEqual([]);
      const chunked = (db.prepare('select count(*) as n from ifw_bulk_import_request where payload_chunks > 0').get() as { n: number }).n;
      expect(chunked).toBeGreaterThan(0);
      const rowsOf = db.prepare('select count(*) as n, count(distinct key) as d from crash_row where request_no = ?');
      let completed = 0;
      let expectedRows = 0;
      let failed = 0;
      for (const s of sent) {
        const row = statusOf.get(s.requestId) as { status: string; record_count: number; error_message: string } | undefined;
        expect(row, `request ${s.requestId} got a 202 but is gone`).toBeDefined();
        const rows = rowsOf.get(s.requestNo) as { n: number; d: number };
        if (s.bad) {
          expect(row!.status).toBe('Failed');
          expect(row!.error_message).toContain(`record ${recordsFor(s.requestNo)}: field "amount"`);
        } else {
          expect(row!.status).toBe('Completed');
        }
        if (row!.status === 'Completed') {
          completed++;
          expect(row!.record_count).toBe(recordsFor(s.requestNo));
          expect(rows).toEqual({ n: recordsFor(s.requestNo), d: recordsFor(s.requestNo) });
          expectedRows += recordsFor(s.requestNo);
        } else {
          failed++;
          expect(rows.n).toBe(0);
        }
      }
      const total = (db.prepare('select count(*) as n from crash_row').get() as { n: number }).n;
      // The requests the kills interrupted were taken up again after their leases expired.
      const retried = (db.prepare('select count(*) as n from ifw_bulk_import_request where attempts > 1').get() as { n: number }).n;
      expect(retried).toBeGreaterThan(0);
      // A request can be committed and then lose its 202 to the kill: it is processed like any other.
      // So the table holds exactly the records of all Completed requests, those the clients know of included.
      const completedRecords = (
        db.prepare("select coalesce(sum(record_count), 0) as n from ifw_bulk_import_request where status = 'Completed'").get() as {
          n: number;
        }
      ).n;
      expect(total).toBe(completedRecords);
      expect(total).toBeGreaterThanOrEqual(expectedRows);
      db.close();
      expect(processingAtKill).toBeGreaterThan(0);
      expect(largeInFlightAtKill).toBeGreaterThan(0);
      expect(completed).toBeGreaterThan(0);
      expect(failed).toBeGreaterThan(0);
      console.log(
        `crash test: ${sent.length} accepted (${chunked} stored in chunks), ${completed} Completed, ${failed} Failed, ${processingAtKill} Processing and ${largeInFlightAtKill} large payloads arriving at the kills, ${retried} retried after lease expiry`,
      );
    } finally {
      await server.stop();
    }
  }, 180_000);
});
