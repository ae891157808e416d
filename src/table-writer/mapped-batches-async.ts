/**
 * The mapping thread's batches (mapped-batches.ts) for an asynchronous importer (PostgreSQL), whose
 * event loop runs while it waits (Atomics.waitAsync) and whose payload may be read from its own
 * connection.
 *
 * The import takes a chunk of batches (postgres/records.ts, thousands of records), then writes it with
 * COPY, and meanwhile the mapping thread should map the next chunk: the two then overlap on two cores.
 * So the thread is heard all the time, not only while the import asks for a batch: its batches wait
 * here (at most AHEAD_ASYNC, a whole chunk and more, and AHEAD_ASYNC_CHARS of COPY text), and its
 * asks for the payload's next piece are answered at once. A text's pieces are in memory. A payload
 * stored in chunks is read on the import's connection, which is free only while the import waits for a
 * batch: the pieces are read then, up to PIECES_AHEAD ahead of the thread's asking, and handed over
 * from here while the connection writes. Without that, an import of 1 000 000 records spent 1.9 s of
 * its 4.9 s waiting for the mapping thread, which waited for the import in turn (docs/benchmarks.md).
 */
import { MapSession, STALL_MS, type FromMapper, type MappedBatch, type Reading } from './mapped-batches.js';
import type { ImportInput } from './model.js';

/** Batches mapped ahead of those the import has taken, at most: about 32 000 records, 3–5 MB of COPY text. */
export const AHEAD_ASYNC = 32;
/**
 * Characters of COPY text in the batches ahead, at most (one batch always goes): records of some
 * kilobytes each would otherwise hold 32 batches of megabytes. 32 batches of records of up to 250
 * characters fit.
 */
export const AHEAD_ASYNC_CHARS = 8 * 1024 * 1024;
/** Pieces of a stored payload (1 MB each) read ahead of the mapping thread's asking, at most. */
const PIECES_AHEAD = 3;
/** How often the listener looks whether the mapping thread has stalled, or the import has stopped. */
const LOOK_MS = 1000;

/** Pieces of one reading, read ahead on the import's connection. */
interface ReadAhead {
  readonly reading: Reading;
  readonly pieces: IteratorResult<Uint8Array>[];
  ended: boolean;
}

/** One job's messages, heard as they come; batches and the payload's pieces wait here for their turn. */
class Listener {
  private readonly batches: MappedBatch[] = [];
  private ended: { readonly error?: unknown } | null = null;
  /** The mapping thread's asks for the next pieces of `askedFor`, not answered yet (it keeps PIECES_ASKED asked). */
  private asks = 0;
  private askedFor: Reading | null = null;
  private ahead: ReadAhead | null = null;
  private wake: (() => void) | null = null;
  private stopped = false;
  private heardAt = performance.now();
  /** Since when the import sleeps until the thread says something. */
  private sleepingSince: number | null = null;

  constructor(private readonly session: MapSession) {
    void this.listen();
  }

  private async listen(): Promise<void> {
    try {
      while (!this.stopped) {
        const message = (await this.session.here.receiveAsync(LOOK_MS, () => this.stopped)) as FromMapper | undefined;
        if (this.stopped) break;
        if (message === undefined) {
          this.checkStall();
          continue;
        }
        this.heardAt = performance.now();
        const step = this.session.step(message);
        if (step === 'end') {
          this.ended = {};
          break;
        }
        if (step === null) continue;
        if ('batch' in step) this.batches.push(step.batch);
        else {
          if (this.askedFor !== step.more) {
            this.askedFor = step.more;
            this.asks = 0;
          }
          this.asks++;
          this.answer();
        }
        this.notify();
      }
    } catch (err) {
      this.ended = { error: err };
    }
    this.notify();
  }

  /** Silence counts only while the import waits for the thread: a long write keeps the thread waiting for room. */
  private checkStall(): void {
    if (this.sleepingSince === null) return;
    if (performance.now() - Math.max(this.heardAt, this.sleepingSince) >= STALL_MS)
      throw new Error(`the mapping thread did not answer for ${STALL_MS / 1000} s`);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The pieces read ahead for the reading under way (a new reading drops those of the one before). */
  private readAhead(): ReadAhead | null {
    const reading = this.session.reading;
    if (reading === null) return null;
    if (this.ahead?.reading !== reading) this.ahead = { reading, pieces: [], ended: false };
    return this.ahead;
  }

  /** Answers the thread's asks with pieces at hand: in memory, or read ahead. */
  private answer(): void {
    const asked = this.askedFor;
    while (this.asks > 0 && asked !== null && asked === this.session.reading) {
      let next: IteratorResult<Uint8Array> | undefined;
      if (asked.sync) next = asked.pieces.next() as IteratorResult<Uint8Array>;
      else next = this.readAhead()?.pieces.shift();
      if (next === undefined) return;
      // After the end, an ask still open has nothing to be answered with.
      this.asks = next.done === true ? 0 : this.asks - 1;
      this.session.send(asked.no, next);
    }
  }

  /** The stored payload's pieces to read a piece ahead into: the thread waits for one, or fewer than PIECES_AHEAD are at hand. */
  private toRead(): ReadAhead | null {
    const ahead = this.readAhead();
    if (ahead === null || ahead.reading.sync || ahead.ended) return null;
    return this.asks > 0 || ahead.pieces.length < PIECES_AHEAD ? ahead : null;
  }

  /** Reads the stored payload's next piece on the import's connection: only ever while the import waits for a batch. */
  private async readPiece(ahead: ReadAhead): Promise<void> {
    const next = await (ahead.reading.pieces.next() as Promise<IteratorResult<Uint8Array>>);
    // The thread may have started another reading meanwhile: this one's pieces are then of no use.
    if (this.ahead !== ahead) return;
    ahead.pieces.push(next);
    if (next.done === true) ahead.ended = true;
    this.answer();
  }

  /** The next batch in order, or null at the end; throws what the thread found (PayloadProblem) in its place. */
  async next(): Promise<MappedBatch | null> {
    // The thread waits for a piece: read it now, even with batches at hand, or it maps nothing meanwhile.
    const asked = this.asks > 0 ? this.toRead() : null;
    if (asked !== null) await this.readPiece(asked);
    for (;;) {
      const batch = this.batches.shift();
      if (batch !== undefined) {
        this.session.took();
        return batch;
      }
      if (this.ended !== null) {
        if ('error' in this.ended) throw this.ended.error;
        return null;
      }
      // The connection is free while the import waits here: read pieces ahead for the thread. Else
      // sleep until the listener hears something (decided without a pause, so no wake-up is missed).
      const ahead = this.toRead();
      if (ahead !== null) await this.readPiece(ahead);
      else {
        this.sleepingSince = performance.now();
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.sleepingSince = null;
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.session.here.interrupt();
  }
}

/**
 * The mapped batches of `input`'s records, mapped on the mapping thread while the import writes the
 * ones before. Throws PayloadProblem where the records stop being readable.
 */
export async function* mappedBatchesAsync(input: ImportInput, copyText: boolean): AsyncGenerator<MappedBatch, void, undefined> {
  const session = new MapSession(input, copyText, { batches: AHEAD_ASYNC, chars: AHEAD_ASYNC_CHARS });
  const listener = new Listener(session);
  try {
    for (;;) {
      const batch = await listener.next();
      if (batch === null) return;
      yield batch;
    }
  } finally {
    listener.stop();
    session.close();
  }
}
