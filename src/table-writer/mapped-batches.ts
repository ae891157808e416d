/**
 * Parsing and mapping on another core. A large payload's import spends about as long parsing its JSON
 * and mapping its records as inserting the rows; on one thread those add up. Here a mapping thread
 * (map-thread.ts, started on first use, one per import running at a time) reads the payload, parses
 * and maps its records and hands back batches of mapped rows, while the importing thread inserts the
 * batch before. SQLite's importing thread stays synchronous (its import runs inside one synchronous
 * transaction): it waits for the next batch with Atomics.wait (sync-channel.ts, mappedBatches), and
 * meanwhile serves the mapping thread the payload's chunks, read on its own connection as before.
 * PostgreSQL's hears the thread all the time with Atomics.waitAsync (mapped-batches-async.ts), its
 * connection's I/O going on, and takes its batches as COPY text written there (copy-text.ts). Both go
 * through one MapSession.
 *
 * The outcome is the import's on one thread, message for message: the same record readers
 * (payload-stream.ts) and the same mapRecord run there, so a record's violations, a payload that is
 * not JSON or has no array at its records path, arrive as they would have been found, in record order.
 * It is used only where that holds without the database: no mapped field has a relation (checking
 * one needs the rows written so before it), and the records path is one the streaming readers take.
 *
 * Flow control keeps memory bounded: the mapping thread runs at most a job's `ahead` batches ahead of
 * the inserts, and asks for the next chunk only as it starts on the one it has.
 */
import { Worker } from 'node:worker_threads';
import { syncChannel, type SyncChannelEnd, type SyncPort } from '../core/sync-channel.js';
import { threadEntry } from '../core/threads.js';
import { QUEUE_THREAD_HEAP_MB } from '../job-queue/thread-host.js';
import type { SqlValue } from '../mapping/convert.js';
import { mapRecord, type CompiledMapping, type FieldViolation, type RelationExists } from '../mapping/engine.js';
import type { RecordError } from '../mapping/messages.js';
import { PayloadProblem, streamSelector } from '../mapping/payload-stream.js';
import type { IntegrationPlan } from '../integrations/model.js';
import type { TargetTable } from '../tables/model.js';
import type { ChunkedPayload, ImportInput } from './model.js';
import { copyFlat, type CopyText } from './copy-text.js';

/** Mapped records: `width` values per record, record after record; a record with violations has them instead. */
export interface MappedBatch {
  readonly length: number;
  /** Empty when `text` holds the values. */
  readonly values: SqlValue[];
  /** Index in the batch → the record's violations (its values are then all null). */
  readonly violations: Map<number, FieldViolation[]> | null;
  /**
   * For a PostgreSQL import (MapJob.copyText): the values as COPY text (copy-text.ts), which the
   * import streams as it is (a string, or UTF-8 bytes read straight from the payload: json-copy.ts);
   * absent when a value cannot be written so (a NUL character): `values` then.
   */
  readonly text?: CopyText;
}

/** The job the mapping thread is given (its channel end's port in the transfer list). */
export interface MapJob {
  readonly plan: IntegrationPlan;
  readonly tables: ReadonlyMap<string, TargetTable>;
  readonly channel: SyncChannelEnd;
  /** Batches carry their values as COPY text (a PostgreSQL import): built here, off the importing thread. */
  readonly copyText: boolean;
  /** Batches mapped ahead of those the import has taken, at most (AHEAD; mapped-batches-async.ts AHEAD_ASYNC). */
  readonly ahead: number;
  /** Characters of COPY text in the batches ahead, at most (but one batch always; mapped-batches-async.ts). */
  readonly aheadChars: number;
}

/** From the mapping thread. `reading` numbers the readings of the payload from its start (see EmptyArrayCheck). */
export type FromMapper =
  | { readonly kind: 'open'; readonly reading: number }
  | { readonly kind: 'more'; readonly reading: number }
  | { readonly kind: 'batch'; readonly batch: MappedBatch }
  | { readonly kind: 'end' }
  | { readonly kind: 'problem'; readonly error: RecordError }
  /** A piece the thread has read and holds no more: its memory back, for the next piece (`spare`). */
  | { readonly kind: 'spare'; readonly data: Uint8Array }
  | { readonly kind: 'failed'; readonly message: string };

/** To the mapping thread: the next piece of the payload's UTF-8 bytes. */
export type ToMapper =
  | { readonly kind: 'chunk'; readonly reading: number; readonly data: Uint8Array }
  | { readonly kind: 'eof'; readonly reading: number }
  | { readonly kind: 'cancel' };

/** Counters of the channel (sync-channel.ts `counter`): batches the import has taken, and whether it gave up. */
export const CONSUMED = 0;
export const CANCELLED = 1;
/** Batches mapped ahead of the inserts at most (about 1 000 records each), for an import that takes them one at a time (SQLite). */
export const AHEAD = 8;
/** A mapping thread that says nothing for this long is taken for dead and the import fails (and is retried). */
export const STALL_MS = 60_000;

/** Characters of a payload text from which it is mapped on the mapping thread (a chunked payload always is). */
export const MAP_THREAD_MIN_CHARS = 1 << 20;
/** A payload text is handed over in pieces of this many bytes (of UTF-8) at most, as a stored payload's chunks are. */
const PIECE_BYTES = 1 << 20;

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Whether the import of `input` maps its records on the mapping thread: a chunked payload, or a text of
 * MAP_THREAD_MIN_CHARS or more (without lone surrogates, which UTF-8 pieces could not carry), unless
 * `input.mapInThread` says otherwise; never with a relation or a records path the readers cannot stream.
 */
export function mapsInThread(input: ImportInput, mapping: CompiledMapping): boolean {
  if (mapping.columns.some((c) => c.relation !== null)) return false;
  if (streamSelector(input.plan.integration.recordsPath) === null) return false;
  if (typeof input.payload === 'string' && !isWellFormed(input.payload)) return false;
  if (input.mapInThread !== undefined) return input.mapInThread;
  return typeof input.payload !== 'string' || input.payload.length >= MAP_THREAD_MIN_CHARS;
}

/**
 * The mapping thread's young generation, in MB (its old generation may grow as far as an importing
 * thread's, QUEUE_THREAD_HEAP_MB, so a record that one thread could map, this one can). It is kept
 * small: what the thread allocates dies young (a batch at a time). Measured on
 * 2 cores (bench:memory at 1 000 000 records on SQLite; bench:process for records/s): with V8's
 * default the peak memory was 1.41 of the payload, with 16 MB 1.06–1.09, with 12 MB 0.86–0.97;
 * records/s were best at 16 (bench:process about 0.70 against 0.66 at 12 and 0.60 at 8).
 */
const MAP_THREAD_YOUNG_MB = 12;

/** Mapping threads not running a job. One importing thread (SQLite) reuses one; concurrent imports (PostgreSQL) each take their own. */
const idle: Worker[] = [];

function takeMapThread(): Worker {
  const reused = idle.pop();
  if (reused !== undefined) return reused;
  const { filename, eval: isCode } = threadEntry(import.meta.url, 'map-thread');
  const started = new Worker(filename, {
    eval: isCode,
    resourceLimits: { maxOldGenerationSizeMb: QUEUE_THREAD_HEAP_MB, maxYoungGenerationSizeMb: MAP_THREAD_YOUNG_MB },
  });
  // It lives as long as the thread that imports; it never keeps a process alive by itself.
  started.unref();
  started.on('error', () => undefined);
  started.on('exit', () => {
    const at = idle.indexOf(started);
    if (at >= 0) idle.splice(at, 1);
    exited.add(started);
  });
  return started;
}

const exited = new WeakSet<Worker>();

/** Back to the idle ones once its import has stopped consuming (a cancelled job ends on the thread first). */
function giveBack(worker: Worker): void {
  if (!exited.has(worker)) idle.push(worker);
}

export type Pieces = Iterator<Uint8Array> | AsyncIterator<Uint8Array>;

/** One reading of the payload from its start; `sync`: its pieces are in memory (a text), not read from a database. */
export interface Reading {
  readonly no: number;
  readonly pieces: Pieces;
  readonly sync: boolean;
}

/** Pieces made here (textChunks), whose memory nothing else holds: transferred to the mapping thread without a copy. */
const owned = new WeakSet<Uint8Array>();

/**
 * Memory of pieces the mapping thread gave back (PIECE_BYTES each, SPARES at most), written again with
 * the next pieces. A fresh megabyte for every piece cost the importing thread more than the copy into
 * it: 34–56 ms of a 100 000-record import in page faults and the garbage collections its external
 * memory set off, on the thread that also writes the rows.
 */
const spares: ArrayBuffer[] = [];
const SPARES = 4;

/** A piece's memory: a spare one when it fits. */
function pieceMemory(bytes: number): Uint8Array {
  const spare = bytes <= PIECE_BYTES ? spares.pop() : undefined;
  return spare === undefined ? new Uint8Array(bytes) : new Uint8Array(spare, 0, bytes);
}

/** Bytes of piece memory kept for the next pieces (SPARES megabytes at most). */
export const spareMemory = (): number => spares.length * PIECE_BYTES;

/** Keeps a piece's memory the mapping thread gave back, up to SPARES. */
function spared(piece: Uint8Array): void {
  if (spares.length < SPARES && piece.buffer.byteLength === PIECE_BYTES && piece.buffer instanceof ArrayBuffer) spares.push(piece.buffer);
}

/**
 * A payload text as the mapping thread reads it: cut between characters and encoded into a piece's
 * memory (a spare one when the thread gave one back), which is transferred: a string would be copied
 * twice, slower.
 */
export function textChunks(payload: string): ChunkedPayload {
  return {
    bytes: Buffer.byteLength(payload),
    chunks: function* () {
      const encoder = new TextEncoder();
      for (let from = 0; from < payload.length;) {
        // As much of the text as fits, and never half of a surrogate pair: PIECE_BYTES characters take
        // PIECE_BYTES bytes at least, so a high surrogate at the cut, alone, would need more room than is
        // left (three bytes), and encodeInto stops before it.
        const memory = new Uint8Array(spares.pop() ?? new ArrayBuffer(PIECE_BYTES));
        const { read, written } = encoder.encodeInto(payload.slice(from, from + PIECE_BYTES), memory);
        const piece = memory.subarray(0, written);
        owned.add(piece);
        yield piece;
        from += read;
      }
    },
  };
}

/** The pieces of a payload as the mapping thread reads them: its chunks, or its text's (textChunks). */
function pieces(payload: string | ChunkedPayload): (no: number) => Reading {
  const { chunks } = typeof payload === 'string' ? textChunks(payload) : payload;
  return (no) => {
    const opened = chunks();
    return Symbol.iterator in opened
      ? { no, pieces: opened[Symbol.iterator](), sync: true }
      : { no, pieces: opened[Symbol.asyncIterator](), sync: false };
  };
}

/** What a message from the mapping thread asks of the import: take a batch, send the next piece of a reading, stop. */
type Step = { readonly batch: MappedBatch } | { readonly more: Reading } | 'end' | null;

/** One job on a mapping thread, seen from the importing thread: what both readers share (mapped-batches-async.ts the other). */
export class MapSession {
  readonly here: SyncPort;
  private readonly worker = takeMapThread();
  private readonly consumed: ReturnType<SyncPort['counter']>;
  private current: Reading | null = null;
  private finished = false;

  constructor(
    input: ImportInput,
    copyText: boolean,
    ahead: { readonly batches: number; readonly chars: number },
    private readonly open = pieces(input.payload),
  ) {
    const { here, there } = syncChannel();
    this.here = here;
    this.consumed = here.counter(CONSUMED);
    const job: MapJob = { plan: input.plan, tables: input.tables, channel: there, copyText, ahead: ahead.batches, aheadChars: ahead.chars };
    this.worker.postMessage(job, [there.port]);
  }

  /** The payload's reading under way (the mapping thread starts one over when it must read the records again). */
  get reading(): Reading | null {
    return this.current;
  }

  /** The import has taken a batch: the mapping thread may map one more. */
  took(): void {
    this.consumed.add(1);
  }

  /** Throws PayloadProblem where the records stop being readable, as the readers on this thread would. */
  step(message: FromMapper | undefined): Step {
    if (message === undefined) throw new Error(`the mapping thread did not answer for ${STALL_MS / 1000} s`);
    switch (message.kind) {
      case 'open':
        void this.current?.pieces.return?.();
        this.current = this.open(message.reading);
        return null;
      case 'more':
        return this.current !== null && this.current.no === message.reading ? { more: this.current } : null;
      case 'batch':
        return { batch: message.batch };
      case 'spare':
        spared(message.data);
        return null;
      case 'end':
        this.finished = true;
        return 'end';
      case 'problem':
        this.finished = true;
        throw new PayloadProblem(message.error);
      case 'failed':
        this.finished = true;
        throw new Error(`the mapping thread failed: ${message.message}`);
    }
  }

  /** The reply to a request for the next piece, transferred: a copy of it (a stored chunk's buffer is reused), unless it was made here. */
  send(reading: number, next: IteratorResult<Uint8Array>): void {
    if (next.done === true) {
      this.here.send({ kind: 'eof', reading } satisfies ToMapper);
    } else {
      let data = next.value;
      if (!owned.has(data)) {
        data = pieceMemory(next.value.length);
        data.set(next.value);
      }
      this.here.send({ kind: 'chunk', reading, data } satisfies ToMapper, [data.buffer as ArrayBuffer]);
    }
  }

  /** Leaving early (an insert failed) stops the mapping thread's work on the job. */
  close(): void {
    void this.current?.pieces.return?.();
    if (!this.finished) {
      this.here.counter(CANCELLED).add(1);
      this.here.send({ kind: 'cancel' } satisfies ToMapper);
    }
    this.here.close();
    giveBack(this.worker);
  }
}

/**
 * The mapped batches of `input`'s records, mapped on the mapping thread as these are consumed, for an
 * importing thread that runs synchronously (SQLite): it waits with Atomics.wait, and reads a chunked
 * payload synchronously. Throws PayloadProblem where the records stop being readable.
 */
export function* mappedBatches(input: ImportInput): Generator<MappedBatch, void, undefined> {
  const session = new MapSession(input, false, { batches: AHEAD, chars: Infinity });
  try {
    for (;;) {
      const step = session.step(session.here.receive(STALL_MS) as FromMapper | undefined);
      if (step === 'end') return;
      if (step === null) continue;
      if ('batch' in step) {
        session.took();
        yield step.batch;
      } else {
        const next = step.more.pieces.next();
        if (next instanceof Promise) throw new Error('this importer reads a chunked payload synchronously');
        session.send(step.more.no, next);
      }
    }
  } finally {
    session.close();
  }
}

/** Relations are the import's to check: a mapping on the mapping thread has none, and staged rows are checked inside the import's transaction. */
const deferRelations: RelationExists = () => true;

/**
 * Maps a batch of records into a MappedBatch, relations left to the import: on the mapping thread, and
 * as a run's pages arrive (sqlite/staged-rows.ts). `row` is scratch, `width` long.
 */
export function mapBatch(mapping: CompiledMapping, records: readonly unknown[], row: SqlValue[], copyText = false): MappedBatch {
  const width = mapping.columns.length;
  const values = new Array<SqlValue>(records.length * width);
  let violations: Map<number, FieldViolation[]> | null = null;
  for (let r = 0, at = 0; r < records.length; r++, at += width) {
    const found = mapRecord(mapping, records[r], row, deferRelations);
    if (found === null) for (let c = 0; c < width; c++) values[at + c] = row[c]!;
    else {
      (violations ??= new Map()).set(r, found);
      for (let c = 0; c < width; c++) values[at + c] = null;
    }
  }
  const text = copyText ? copyFlat(values, width) : null;
  return text === null ? { length: records.length, values, violations } : { length: records.length, values: [], violations, text };
}

/** How the record loop fills a row from a mapped batch: its values, or the violations found while mapping. */
export const mappedRowFiller =
  (mapping: CompiledMapping) =>
  (batch: MappedBatch, index: number, row: SqlValue[]): FieldViolation[] | null => {
    const violations = batch.violations?.get(index);
    if (violations !== undefined) return violations;
    const width = mapping.columns.length;
    const { values } = batch;
    for (let c = 0, at = index * width; c < width; c++, at++) row[c] = values[at]!;
    return null;
  };
