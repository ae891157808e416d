/**
 * The records of a payload that is read in pieces (its stored chunks, in order), one at a time, at the
 * integration's records path, with a streaming JSON parser (@streamparser/json): a record is handed on
 * as soon as it is complete and then forgotten, and nothing outside the records is kept either, so the
 * memory an import needs does not grow with the payload. Same outcome and messages as extractRecords
 * (payload.ts) on the whole text: a payload that is not JSON, or whose records path does not point to
 * an array, is a payload-level error.
 */
import { JSONParser } from '@streamparser/json';
import { ExactJsonParser } from '../core/exact-json.js';
import { parsePath } from '../json-path/paths.js';
import { payloadError, type RecordError } from './messages.js';
import { NotJson, RootArrayReader } from './root-array-stream.js';

/** Thrown by the record readers below: the payload-level error that fails the import. */
export class PayloadProblem extends Error {
  constructor(readonly error: RecordError) {
    super(error.message);
  }
}

const notJson = (reason: string): PayloadProblem =>
  new PayloadProblem(payloadError('is not valid JSON', `payload is not valid JSON: ${reason}`));

const notArray = (recordsPath: string): PayloadProblem =>
  new PayloadProblem(
    recordsPath === ''
      ? payloadError('is not an array', "payload: the root is not an array (set the integration's records path)")
      : payloadError('is not an array', `payload: records path "${recordsPath}" does not point to an array`),
  );

/**
 * The parser's selector for the items at `recordsPath` ('$.a.b.*'), or null when the path cannot be
 * said in the parser's dotted selectors (a name holding a dot or naming the wildcard).
 */
export function streamSelector(recordsPath: string): string | null {
  const segments = parsePath(recordsPath);
  const names = segments.map((s) => (s.kind === 'name' ? s.name : String(s.index)));
  if (names.some((n) => n === '' || n.includes('.') || n === '*')) return null;
  return ['$', ...names, '*'].join('.');
}

/** Reads records from bytes written in order; `take()` hands over those completed so far. */
export class RecordStream {
  private readonly parser: ExactJsonParser;
  private records: unknown[] = [];
  private failure: PayloadProblem | null = null;
  /**
   * The path holds no array: said at the end, once the whole text is known to be JSON (a text that is
   * not JSON says that first, as extractRecords does).
   */
  private noArray = false;
  private ended = false;
  /** Whether anything but whitespace was written: a text of whitespace only is no JSON text. */
  private begun = false;
  /** Records seen in all: none at the end asks whether the path held an empty array (see EmptyArrayCheck). */
  count = 0;
  /** Whether no record at all may mean that the path held no array (see EmptyArrayCheck). */
  readonly emptyUnsure: boolean = true;

  constructor(
    private readonly recordsPath: string,
    selector: string,
  ) {
    this.parser = new ExactJsonParser([selector]);
    this.parser.onValue = ({ value, parent }) => {
      if (this.failure !== null || this.noArray) return;
      if (!Array.isArray(parent)) {
        this.noArray = true;
        return;
      }
      this.count++;
      this.records.push(value);
    };
    this.parser.onError = (err) => {
      this.failure ??= notJson(err.message);
    };
    this.parser.onEnd = () => {
      this.ended = true;
    };
  }

  /** Feeds the next bytes; throws PayloadProblem as soon as the payload is known not to be JSON. */
  write(bytes: Uint8Array): void {
    if (this.failure === null) {
      if (this.ended) {
        // The root value is complete: only whitespace may follow.
        for (const b of bytes)
          if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) this.failure = notJson('unexpected data after the JSON text');
      } else {
        if (!this.begun) this.begun = bytes.some((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
        this.parser.write(bytes);
      }
    }
    if (this.failure !== null) throw this.failure;
  }

  /** The records completed since the last call. */
  take(): unknown[] {
    const taken = this.records;
    this.records = [];
    return taken;
  }

  end(): void {
    if (this.failure === null && !this.ended) {
      try {
        this.parser.end();
      } catch (err) {
        this.failure = notJson((err as Error).message);
      }
      if (!this.ended || !this.begun) this.failure ??= notJson('unexpected end of the JSON text');
    }
    if (this.failure === null && this.noArray) this.failure = notArray(this.recordsPath);
    if (this.failure !== null) throw this.failure;
  }
}

/**
 * The records of a payload that is the array of records (records path ''): read by the fast reader
 * (root-array-stream.ts), or by the streaming parser when the text does not start with `[` (then
 * it says whether it is no JSON or no array, as extractRecords does).
 */
class RootRecordStream {
  private fast: RootArrayReader | null = new RootArrayReader();
  private slow: RecordStream | null = null;

  get count(): number {
    return this.fast !== null ? this.fast.count : this.slow!.count;
  }

  /** An array that held no record says so itself: only the streaming parser's answer needs the check. */
  get emptyUnsure(): boolean {
    return this.fast === null;
  }

  write(bytes: Uint8Array): void {
    let rest = bytes;
    if (this.fast !== null) {
      const other = fastly(() => this.fast!.write(bytes));
      if (other < 0) return;
      this.fast = null;
      this.slow = new RecordStream('', '$.*');
      rest = bytes.subarray(other);
    }
    this.slow!.write(rest);
  }

  take(): unknown[] {
    return this.fast !== null ? this.fast.take() : this.slow!.take();
  }

  end(): void {
    if (this.fast !== null) fastly(() => this.fast!.end());
    else this.slow!.end();
  }
}

/** Runs a step of the fast reader, its NotJson made the payload-level error. */
function fastly<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (err instanceof NotJson) throw notJson(err.message);
    throw err;
  }
}

/** The reader for `selector`: the fast one for the records at the root. */
const recordStream = (recordsPath: string, selector: string): RecordStream | RootRecordStream =>
  selector === '$.*' ? new RootRecordStream() : new RecordStream(recordsPath, selector);

/**
 * When a whole payload yielded no record, whether the path held an empty array: the value at the path
 * is parsed from a second reading (it holds no item, so it is small), and anything but an array is
 * the same error as extractRecords gives.
 */
class EmptyArrayCheck {
  private readonly parser: JSONParser;
  found = false;
  private isArray = false;

  constructor(
    private readonly recordsPath: string,
    selector: string,
  ) {
    this.parser = new JSONParser({ paths: [selector.slice(0, -2)], keepStack: false });
    this.parser.onValue = ({ value }) => {
      this.found = true;
      this.isArray = Array.isArray(value);
    };
    this.parser.onError = () => undefined;
    this.parser.onEnd = () => undefined;
  }

  write(chunk: Uint8Array): void {
    if (!this.found) this.parser.write(chunk);
  }

  end(): void {
    if (!this.found || !this.isArray) throw notArray(this.recordsPath);
  }
}

function checkEmptyArray(chunks: Iterable<Uint8Array>, recordsPath: string, selector: string): void {
  const check = new EmptyArrayCheck(recordsPath, selector);
  for (const chunk of chunks) {
    check.write(chunk);
    if (check.found) break;
  }
  check.end();
}

async function checkEmptyArrayAsync(chunks: AsyncIterable<Uint8Array>, recordsPath: string, selector: string): Promise<void> {
  const check = new EmptyArrayCheck(recordsPath, selector);
  for await (const chunk of chunks) {
    check.write(chunk);
    if (check.found) break;
  }
  check.end();
}

/** The whole text, for a records path the streaming selectors cannot express (kept whole: rare). */
function wholeText(chunks: Iterable<Uint8Array>): string {
  return Buffer.concat([...chunks]).toString('utf8');
}

/**
 * Bytes handed to the parser at a time. A stored chunk (1 MB) holds thousands of records; parsed at
 * once they would all be alive together, long enough for the garbage collector to move them to the
 * old generation, which then grows by several times the live records before it is collected. Parsed
 * in slices, a batch holds about `batchSize` records and dies young.
 */
const SLICE_BYTES = 16 * 1024;

/** Records from chunks gathered into batches of about `batchSize`, each chunk fed in slices. */
class Batches {
  private pending: unknown[] = [];

  constructor(
    readonly stream: RecordStream | RootRecordStream,
    private readonly batchSize: number,
  ) {}

  /** Feeds a chunk; yields the batches it completed. */
  *feed(chunk: Uint8Array): Generator<unknown[]> {
    for (let from = 0; from < chunk.length; from += SLICE_BYTES) {
      this.stream.write(chunk.subarray(from, from + SLICE_BYTES));
      const taken = this.stream.take();
      this.pending = this.pending.length === 0 ? taken : this.pending.concat(taken);
      if (this.pending.length >= this.batchSize) {
        yield this.pending;
        this.pending = [];
      }
    }
  }

  /** The text is complete: the records not yet handed on (throws PayloadProblem when it broke off). */
  end(): unknown[] {
    this.stream.end();
    return this.pending.concat(this.stream.take());
  }
}

/**
 * The records of stored chunks in batches of about `batchSize`, read as the batches are consumed.
 * `open()` reads the chunks from the start (called again only to tell an empty array from a wrong path).
 * Throws PayloadProblem.
 */
export function* recordBatches(
  open: () => Iterable<Uint8Array>,
  recordsPath: string,
  batchSize: number,
  whole: (text: string) => unknown[] | RecordError,
): Generator<unknown[]> {
  const selector = streamSelector(recordsPath);
  if (selector === null) {
    const records = whole(wholeText(open()));
    if (!Array.isArray(records)) throw new PayloadProblem(records);
    yield records;
    return;
  }
  const batches = new Batches(recordStream(recordsPath, selector), batchSize);
  for (const chunk of open()) yield* batches.feed(chunk);
  const last = batches.end();
  if (batches.stream.count === 0 && batches.stream.emptyUnsure) checkEmptyArray(open(), recordsPath, selector);
  if (last.length > 0) yield last;
}

/** The same over chunks read asynchronously (PostgreSQL). */
export async function* recordBatchesAsync(
  open: () => AsyncIterable<Uint8Array>,
  recordsPath: string,
  batchSize: number,
  whole: (text: string) => unknown[] | RecordError,
): AsyncGenerator<unknown[]> {
  const selector = streamSelector(recordsPath);
  if (selector === null) {
    const all: Uint8Array[] = [];
    for await (const chunk of open()) all.push(chunk);
    const records = whole(wholeText(all));
    if (!Array.isArray(records)) throw new PayloadProblem(records);
    yield records;
    return;
  }
  const batches = new Batches(recordStream(recordsPath, selector), batchSize);
  for await (const chunk of open()) yield* batches.feed(chunk);
  const last = batches.end();
  if (batches.stream.count === 0 && batches.stream.emptyUnsure) await checkEmptyArrayAsync(open(), recordsPath, selector);
  if (last.length > 0) yield last;
}
