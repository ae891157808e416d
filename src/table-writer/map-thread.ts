/**
 * Entry of the mapping thread (see mapped-batches.ts): for each job, reads the payload's pieces from
 * the importing thread, reads records at the root straight from their bytes (json-records.ts) and any
 * others with the same readers as an import on one thread, maps them with the same mapRecord, and sends
 * them back in batches, at most `job.ahead` batches (and `job.aheadChars` characters of COPY text)
 * ahead of the inserts. A job runs synchronously from start to end; the next one waits in the thread's
 * message queue.
 */
import { parentPort } from 'node:worker_threads';
import { SyncPort } from '../core/sync-channel.js';
import type { SqlValue } from '../mapping/convert.js';
import { compileMapping } from '../mapping/engine.js';
import { extractRecords } from '../mapping/payload.js';
import { PayloadProblem, recordBatches } from '../mapping/payload-stream.js';
import { CANCELLED, CONSUMED, mapBatch, type FromMapper, type MapJob, type MappedBatch, type ToMapper } from './mapped-batches.js';
import { JsonCopyReader, type CopyBatch } from './json-copy.js';
import { readsStraight, type JsonRecordReader } from './json-records.js';
import { JsonValuesReader } from './json-values.js';

if (parentPort === null) throw new Error('map-thread.ts runs as a worker thread; mapped-batches.ts starts it');

/** Records per batch read from the payload, at least (as on one thread). */
const BATCH = 1000;
/**
 * Pieces of the payload asked for ahead of the one being read. With one, the thread waited for the
 * importing thread's answer at every piece whenever that thread was busy writing (68 ms of a 100 000
 * record import on PostgreSQL); a second one asked keeps it reading.
 */
const PIECES_ASKED = 2;
/** How often a wait looks whether the import gave up. */
const LOOK_MS = 1000;

class Cancelled extends Error {}

function run(job: MapJob): void {
  const channel = new SyncPort(job.channel);
  const consumed = channel.counter(CONSUMED);
  const cancelled = channel.counter(CANCELLED);
  const send = (message: FromMapper, transfer?: ArrayBuffer[]): void => channel.send(message, transfer);

  const receive = (): ToMapper => {
    for (;;) {
      const message = channel.receive(LOOK_MS) as ToMapper | undefined;
      if (message?.kind === 'cancel' || cancelled.get() !== 0) throw new Cancelled();
      if (message !== undefined) return message;
    }
  };

  let readings = 0;
  /** The payload from its start; the next piece is asked for as each one is handed on, PIECES_ASKED ahead. */
  function* read(): Generator<Uint8Array> {
    const reading = ++readings;
    send({ kind: 'open', reading });
    for (let i = 0; i < PIECES_ASKED; i++) send({ kind: 'more', reading });
    for (;;) {
      const message = receive();
      if (message.kind === 'cancel' || message.reading !== reading) continue;
      if (message.kind === 'eof') return;
      send({ kind: 'more', reading });
      yield message.data;
    }
  }

  let sent = 0;
  /** COPY text characters of the batches sent and not yet taken, oldest first, and their sum. */
  const untaken: number[] = [];
  let charsAhead = 0;
  /** Room for a batch of `chars` characters: fewer than `job.ahead` batches ahead, and within `job.aheadChars` unless it is the only one. */
  const waitForRoom = (chars: number): void => {
    for (;;) {
      const taken = consumed.get();
      while (sent - untaken.length < taken) charsAhead -= untaken.shift()!;
      if (sent - taken < job.ahead && (untaken.length === 0 || charsAhead + chars <= job.aheadChars)) return;
      if (cancelled.get() !== 0) throw new Cancelled();
      consumed.waitWhile(taken, LOOK_MS);
    }
  };

  const sendBatch = (batch: MappedBatch, transfer?: ArrayBuffer[]): void => {
    const chars = batch.text?.length ?? 0;
    waitForRoom(chars);
    untaken.push(chars);
    charsAhead += chars;
    send({ kind: 'batch', batch }, transfer);
    sent++;
  };

  try {
    const mapping = compileMapping(job.plan, job.tables);
    const { recordsPath } = job.plan.integration;
    // Records at the root, read straight from their bytes into COPY text bytes (json-copy.ts) or into
    // values (json-values.ts); where the reader gives up, the records are read again from the start
    // below, and those it sent are passed over.
    let skip = 0;
    if (readsStraight(mapping, recordsPath)) {
      const spare = (data: Uint8Array): void => send({ kind: 'spare', data }, [data.buffer as ArrayBuffer]);
      const sent = job.copyText
        ? readStraight(new JsonCopyReader(mapping, BATCH), read(), spare, ({ length, text, violations }: CopyBatch) =>
            sendBatch({ length, values: [], violations, text }, [text.buffer as ArrayBuffer]),
          )
        : readStraight(new JsonValuesReader(mapping, BATCH), read(), spare, (batch: MappedBatch) => sendBatch(batch));
      if (sent === null) {
        send({ kind: 'end' });
        return;
      }
      skip = sent;
    }
    const row = new Array<SqlValue>(mapping.columns.length).fill(null);
    const batches = recordBatches(read, recordsPath, BATCH, (text) => extractRecords(text, recordsPath, mapping.records));
    for (let records of batches) {
      if (skip > 0) {
        const passed = Math.min(skip, records.length);
        skip -= passed;
        records = records.slice(passed);
        if (records.length === 0) continue;
      }
      sendBatch(mapBatch(mapping, records, row, job.copyText));
    }
    send({ kind: 'end' });
  } catch (err) {
    if (err instanceof PayloadProblem) send({ kind: 'problem', error: err.error });
    else if (!(err instanceof Cancelled))
      send({ kind: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  } finally {
    channel.close();
  }
}

/**
 * Reads the pieces with `reader` to their end: null, or where it gave up, the records it sent (the rest
 * is the general path's). The reader keeps nothing of a piece it has read: its memory goes back
 * (`spare`) for the next pieces.
 */
function readStraight<B>(
  reader: JsonRecordReader<B>,
  pieces: Iterable<Uint8Array>,
  spare: (piece: Uint8Array) => void,
  emit: (batch: B) => void,
): number | null {
  for (const piece of pieces) {
    if (!reader.write(piece, emit)) return reader.sent;
    spare(piece);
  }
  return reader.end(emit) ? null : reader.sent;
}

parentPort.on('message', run);
