/**
 * The buffers a payload received in chunks is gathered in, reused from one chunk (and one upload) to
 * the next. A buffer is taken when a chunk starts filling and given back once its write is done.
 *
 * Why reuse: a large payload is about a hundred 1 MB chunks. As fresh buffers each would become
 * garbage of the thread that wrote it (SQLite's writer thread, which allocates little else and so
 * collects rarely), and the process held some 70 MB of dead chunks at 1 000 000 records before its
 * collector ran. The buffers are shared memory, so the writer thread reads a chunk where the HTTP
 * thread wrote it: no copy, no transfer, nothing left to collect.
 */

/** Idle buffers kept for the next chunks; more in use at once (concurrent uploads) are dropped when given back. */
const KEEP_IDLE = 8;

export class ChunkBuffers {
  private readonly idle: Uint8Array[] = [];

  constructor(readonly bytes: number) {}

  /** A buffer of `bytes` bytes; its content is whatever the last chunk left in it. */
  take(): Uint8Array {
    return this.idle.pop() ?? new Uint8Array(new SharedArrayBuffer(this.bytes));
  }

  /** Gives a buffer from `take` back (the whole of it, not a view of part of it). */
  give(buffer: Uint8Array): void {
    if (buffer.byteLength === this.bytes && this.idle.length < KEEP_IDLE) this.idle.push(buffer);
  }
}
