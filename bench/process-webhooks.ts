/**
 * `bench:process` with webhooks (BENCH_WEBHOOKS=1): the whole service on SQLite with its job queue
 * threads, draining the same many small Pending requests twice per round, once with no webhook and once
 * with a webhook on the integration whose receiver answers after BENCH_WEBHOOK_DELAY_MS (default 200 ms):
 * every request's end then writes an outbox row and the `webhooks` lane sends it meanwhile. Rounds
 * alternate; the medians are compared. Last line: `process with webhooks requests/s … ratio=…`
 * (with / without; 1.0 means webhooks cost processing nothing).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ConfigModule from '../src/core/config.js';
import type * as LoggerModule from '../src/core/logger.js';
import type * as ServiceModule from '../src/main/service.js';
import type * as ApplyModule from '../src/declarative-config/apply.js';
import type * as StoreModule from '../src/webhooks/store.js';
import type * as ModelModule from '../src/webhooks/model.js';

const built = (module: string): Promise<unknown> => import(pathToFileURL(path.resolve(import.meta.dirname, '../dist', module)).href);
const { loadConfig } = (await built('core/config.js')) as typeof ConfigModule;
const { createLogger } = (await built('core/logger.js')) as typeof LoggerModule;
const { createService } = (await built('main/service.js')) as typeof ServiceModule;
const { applyConfig } = (await built('declarative-config/apply.js')) as typeof ApplyModule;
const { createWebhook } = (await built('webhooks/store.js')) as typeof StoreModule;
const { newWebhookSecret } = (await built('webhooks/model.js')) as typeof ModelModule;

const REQUESTS = Number(process.env.BENCH_WEBHOOK_REQUESTS ?? 400);
const RECORDS = 50;
const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3);
const DELAY_MS = Number(process.env.BENCH_WEBHOOK_DELAY_MS ?? 200);

const model = {
  targetTables: [
    {
      name: 'hook_item',
      primaryKey: ['no'],
      fields: [
        { name: 'no', type: 'code', maxLength: 20 },
        { name: 'name', type: 'text', maxLength: 50 },
      ],
    },
  ],
  integrations: [
    {
      sortingOrder: 70,
      name: 'Hook items',
      type: 'file',
      targetTable: 'hook_item',
      acceptBulkImportRequests: true,
      writeMode: 'upsert',
      fields: [
        { fieldNo: 1, title: 'No', sourcePath: 'no', columnType: 'standard' },
        { fieldNo: 2, title: 'Name', sourcePath: 'name', columnType: 'standard' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'no' },
        { fieldNo: 2, targetField: 'name' },
      ],
    },
  ],
};

/** A receiver that answers 204 after DELAY_MS: slow, as a busy one is. */
async function slowReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        received++;
        res.writeHead(204).end();
      }, DELAY_MS),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Milliseconds from the wake until every request has ended, on a fresh service. */
async function drain(webhookUrl: string | undefined): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-bench-hooks-'));
  const config = loadConfig({}, { dataDir: dir, logLevel: 'silent', port: 0, workers: true, schedulerTickMs: 50 });
  const service = await createService(config, { logger: createLogger(config) });
  try {
    const clock = () => new Date();
    await applyConfig(service.db, model, clock);
    if (webhookUrl !== undefined)
      await createWebhook(service.db, service.secrets, clock, { integrationSortingOrder: 70, url: webhookUrl, secret: newWebhookSecret() });
    // Hold the processor while the requests are written, so that the clock starts with all of them waiting.
    await service.db.updateTable('ifw_job_queue_entry').set({ status: 'On Hold' }).where('id', '=', 'bulk-import-processor').execute();
    const now = new Date().toISOString();
    for (let from = 0; from < REQUESTS; from += 100) {
      const rows = Array.from({ length: Math.min(100, REQUESTS - from) }, (_, i) => {
        const n = from + i;
        const payload = JSON.stringify(Array.from({ length: RECORDS }, (_, r) => ({ no: `R${n}-${r}`, name: `Item ${n} ${r}` })));
        return {
          request_id: crypto.randomUUID(),
          integration_sorting_order: 70,
          payload,
          payload_length: payload.length,
          status: 'Pending',
          submitted_at: now,
          processed_at: null,
          lease_owner: null,
          lease_expires_at: null,
          started_at: null,
          ended_at: null,
          submitted_by: null,
        };
      });
      await service.db.insertInto('ifw_bulk_import_request').values(rows).execute();
    }
    const started = performance.now();
    await service.db
      .updateTable('ifw_job_queue_entry')
      .set({ status: 'Ready', next_run_at: new Date().toISOString() })
      .where('id', '=', 'bulk-import-processor')
      .execute();
    service.queue?.wake();
    for (;;) {
      const left = await service.db
        .selectFrom('ifw_bulk_import_request')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', ['Pending', 'Processing'])
        .executeTakeFirstOrThrow();
      if (Number(left.n) === 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - started;
    const failed = await service.db.selectFrom('ifw_bulk_import_request').select('request_id').where('status', '<>', 'Completed').execute();
    if (failed.length > 0) throw new Error(`${failed.length} requests did not complete`);
    return ms;
  } finally {
    await service.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function mainWebhooks(): Promise<void> {
  const receiver = await slowReceiver();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  try {
    console.log(
      `webhooks: ${REQUESTS} requests of ${RECORDS} records, receiver answering after ${DELAY_MS} ms, ${ROUNDS} rounds (medians compared)`,
    );
    const without: number[] = [];
    const withHooks: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const a = await drain(undefined);
      const before = receiver.received();
      const b = await drain(receiver.url);
      without.push(a);
      withHooks.push(b);
      console.log(
        `round ${round}: without webhooks ${a.toFixed(0)} ms, with a webhook ${b.toFixed(0)} ms (${receiver.received() - before} events received meanwhile)`,
      );
    }
    const rateWithout = REQUESTS / (median(without) / 1000);
    const rateWith = REQUESTS / (median(withHooks) / 1000);
    console.log(`process without webhooks requests/s ${Math.round(rateWithout)}`);
    console.log(`process with webhooks requests/s ${Math.round(rateWith)} ratio=${(rateWith / rateWithout).toFixed(2)} target=1.0`);
  } finally {
    await receiver.close();
  }
}
