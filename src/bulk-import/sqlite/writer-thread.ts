/**
 * Entry of the submission writer thread. Each batch of accepted requests is inserted in one
 * transaction and committed with synchronous=FULL; the fsync happens here, so the HTTP thread keeps
 * parsing the next submissions (which form the next batch) while the disk works.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFile } from '../../storage/sqlite/dialect.js';
import type { NewRequestRow, WriterData, WriterMessage, WriterReply } from './writer-messages.js';

if (parentPort === null) throw new Error('writer-thread.ts runs as a worker thread; start it through createRequestWriter');
const port = parentPort;
const { file, busyTimeoutMs } = workerData as WriterData;
const db = openSqliteFile(file, busyTimeoutMs);
const insert = db.prepare(
  `insert into ifw_bulk_import_request (request_id, integration_sorting_order, payload, status, submitted_at, submitted_by)
   values (?, ?, ?, 'Pending', ?, ?)`,
);
const insertAll = db.transaction((rows: readonly NewRequestRow[]) => {
  for (const r of rows) insert.run(r.requestId, r.integrationSortingOrder, r.payload, r.submittedAt, r.submittedBy);
});
const reply = (message: WriterReply) => port.postMessage(message);

port.on('message', (message: WriterMessage) => {
  if (message.type === 'stop') {
    db.close();
    port.close();
    return;
  }
  try {
    insertAll.immediate(message.rows);
    reply({ type: 'done', id: message.id });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    reply({
      type: 'failed',
      id: message.id,
      message: (err as Error).message,
      busy: typeof code === 'string' && code.startsWith('SQLITE_BUSY'),
    });
  }
});
reply({ type: 'ready' });
