/**
 * Entry of the submission writer thread. Each batch of accepted requests is inserted in one
 * transaction and committed with synchronous=FULL; the fsync happens here, so the HTTP thread keeps
 * parsing the next submissions (which form the next batch) while the disk works.
 *
 * The chunks of a large payload arrive here as they are received, each inserted in a commit that does
 * not wait for the disk (synchronous=NORMAL). They become durable with the commit of their request's
 * row, which comes after them: in WAL mode that commit's fsync covers every frame written before it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { queryCompiler } from '../../storage/connection.js';
import { openSqliteFile } from '../../storage/sqlite/dialect.js';
import { preparedRequestInsert } from '../insert-requests.js';
import type { NewRequestRow, WriterData, WriterMessage, WriterReply } from './writer-messages.js';

if (parentPort === null) throw new Error('writer-thread.ts runs as a worker thread; start it through createRequestWriter');
const port = parentPort;
const { file, busyTimeoutMs } = workerData as WriterData;
const db = openSqliteFile(file, busyTimeoutMs);
// The one request INSERT (insert-requests.ts), compiled once and prepared once.
const requestInsert = preparedRequestInsert(queryCompiler('sqlite'));
const insert = db.prepare(requestInsert.sql);
const insertAll = db.transaction((rows: readonly NewRequestRow[]) => {
  for (const r of rows) insert.run(...requestInsert.values(r));
});
const insertChunk = db.prepare('insert into ifw_bulk_import_payload_chunk (request_id, seq, data) values (?, ?, ?)');
const discard = db.prepare('delete from ifw_bulk_import_payload_chunk where request_id = ?');
const reply = (message: WriterReply) => port.postMessage(message);

let durable = true;
function durability(full: boolean): void {
  if (durable === full) return;
  db.pragma(full ? 'synchronous = FULL' : 'synchronous = NORMAL');
  durable = full;
}

port.on('message', (message: WriterMessage) => {
  if (message.type === 'stop') {
    db.close();
    port.close();
    return;
  }
  try {
    if (message.type === 'insert') {
      durability(true);
      insertAll.immediate(message.rows);
    } else if (message.type === 'chunk') {
      durability(false);
      insertChunk.run(message.requestId, message.seq, message.data);
    } else {
      durability(false);
      discard.run(message.requestId);
    }
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
