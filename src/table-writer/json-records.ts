/**
 * Records at the root of a payload read from its UTF-8 bytes on the mapping thread (map-thread.ts),
 * without parsing them into objects: parsing every record, mapping it and writing its values again was
 * most of an import's time (JSON.parse, the garbage it leaves). A record's mapped values are found by
 * their keys in the bytes (each column's kind of value and where its bytes are), and handed to the
 * output (`RecordLines`) to write the record's line: COPY text bytes for PostgreSQL (json-copy.ts), the
 * values SQLite binds (json-values.ts). The output takes the usual values as they are and gives the
 * others to the field's converter; where a value breaks its field's rule, or the record has a key twice
 * on a mapped path, a key with escapes, or is no object, the record is parsed and mapped whole as on the
 * general path (parseJsonExact, mapRecord), so its violations are the same, in the same order. A batch
 * holds what the general path would send, record for record.
 *
 * The bytes are checked as JSON as they are read (strings, escapes, numbers, literals, nesting, the
 * array's commas and brackets, nothing but whitespace after it). At anything else (a payload that is
 * no array, text that is not JSON, nesting deeper than MAX_DEPTH, a record larger than MAX_RECORD_BYTES,
 * a record the output cannot write) the reader gives up and says how many records it sent: the general
 * path reads the payload again from its start and carries on after them, and finds what it finds.
 */
import { parseJsonExact } from '../core/exact-json.js';
import type { SqlValue } from '../mapping/convert.js';
import { mapRecord, type CompiledMapping, type FieldViolation } from '../mapping/engine.js';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  GIVE_UP,
  isDigit,
  isLiteral,
  isSpace,
  JsonBytes,
  MAX_DEPTH,
  MINUS,
  MORE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
} from '../mapping/json-bytes.js';

/** What a mapped value's bytes are. */
export const ABSENT = 0;
export const NULL = 1;
export const STRING = 2;
export const NUMBER = 3;
export const TRUE = 4;
export const FALSE = 5;
/** An object or an array: no field takes one (the record is mapped whole, for its violation). */
export const OTHER = 6;

/** A string value's flags. */
export const ESCAPED = 1;
export const WIDE = 2;

/** A record's values as found in its bytes, per column: the kind of value (ABSENT …), where its bytes are, a string's flags. */
export interface FoundValues {
  readonly kinds: Uint8Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly flags: Uint8Array;
}

/** Where a reader's records go: a batch's lines, written one record at a time. */
export interface RecordLines<B> {
  /** Writes a record's line from its values found in `buf`; false (nothing of it kept) when a value breaks its field's rule. */
  line(buf: Buffer, found: FoundValues): boolean;
  /** Writes the line of a record mapped whole (its row; all null when it has violations); false when it cannot (the reader gives up). */
  row(row: readonly SqlValue[]): boolean;
  /** The lines written since the last batch, as a batch of `length` records; the next one starts empty. */
  take(length: number, violations: Map<number, FieldViolation[]> | null): B;
}

/**
 * Whether the records of a payload at `recordsPath` can be read here for `mapping`: records at the
 * root, no relation, and every source path made of names.
 */
export function readsStraight(mapping: CompiledMapping, recordsPath: string): boolean {
  return (
    recordsPath === '' &&
    mapping.columns.every((c) => c.relation === null && (c.path === null || (c.path.length > 0 && c.path.every((s) => s.kind === 'name'))))
  );
}

const EMPTY = Buffer.alloc(0);

/** A record's bytes at most (they are kept whole until it ends); larger is left to the general path. */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** One property name on the mapped paths: the columns it is the value of, the names under it. */
interface Key {
  readonly name: Buffer;
  readonly columns: number[];
  node: Node | null;
  /** Its place in `seen` (a record having it twice is mapped whole). */
  readonly id: number;
}

interface Node {
  readonly keys: Key[];
}

export class JsonRecordReader<B> {
  private readonly root: Node = { keys: [] };
  private readonly width: number;
  private seen: Int32Array;
  private serial = 0;
  /** The record under way: each column's kind of value, where its bytes are, a string's flags (ESCAPED, WIDE). */
  private readonly found: FoundValues;
  private readonly kinds: Uint8Array;
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  private readonly flags: Uint8Array;
  /** The record under way is mapped whole. */
  private whole = false;
  private readonly json = new JsonBytes();

  /** The bytes of a record not yet whole at the end of the last write. */
  private carry = EMPTY;
  /** Where the reader is around the records: 0 before `[`, 1 after it, 2 after a comma, 3 after a record, 4 after `]`. */
  private at = 0;
  private batchLength = 0;
  private violations: Map<number, FieldViolation[]> | null = null;
  private readonly scratch: SqlValue[];
  /** Records handed on in batches. */
  sent = 0;
  /** Records parsed and mapped whole (the rest were read straight). */
  mappedWhole = 0;

  constructor(
    private readonly mapping: CompiledMapping,
    private readonly batchSize: number,
    private readonly lines: RecordLines<B>,
  ) {
    const { columns } = mapping;
    this.width = columns.length;
    let ids = 0;
    columns.forEach((column, c) => {
      if (column.path === null) return;
      let node = this.root;
      column.path.forEach((segment, depth) => {
        const name = Buffer.from(segment.kind === 'name' ? segment.name : String(segment.index));
        let key = node.keys.find((k) => k.name.equals(name));
        if (key === undefined) node.keys.push((key = { name, columns: [], node: null, id: ids++ }));
        if (depth === column.path!.length - 1) key.columns.push(c);
        else node = key.node ??= { keys: [] };
      });
    });
    this.seen = new Int32Array(ids);
    this.kinds = new Uint8Array(this.width);
    this.starts = new Int32Array(this.width);
    this.ends = new Int32Array(this.width);
    this.flags = new Uint8Array(this.width);
    this.found = { kinds: this.kinds, starts: this.starts, ends: this.ends, flags: this.flags };
    this.scratch = new Array<SqlValue>(this.width).fill(null);
  }

  /**
   * Reads the next bytes; hands on each full batch. Answers false when the reader gives up (the records
   * of the batch under way are not sent; `sent` says how many were).
   */
  write(bytes: Uint8Array, emit: (batch: B) => void): boolean {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = buf.length;
    let p = 0;
    // The record under way: its start joined with as much of these bytes as it takes to end it (the
    // rest is read where it is).
    for (let take = Math.min(n, 64 * 1024); this.carry.length > 0; take = Math.min(n, take * 4)) {
      const joined = Buffer.concat([this.carry, buf.subarray(0, take)]);
      const end = this.recordAt(joined, 0, joined.length, emit);
      if (end === GIVE_UP) return false;
      if (end !== MORE) {
        p = end - this.carry.length;
        this.carry = EMPTY;
      } else if (take === n) {
        this.carry = joined;
        return joined.length <= MAX_RECORD_BYTES;
      }
    }
    while (p < n) {
      const b = buf[p]!;
      if (isSpace(b)) {
        p++;
        continue;
      }
      switch (this.at) {
        case 0:
          if (b !== OPEN_ARRAY) return false;
          this.at = 1;
          p++;
          continue;
        case 1:
        case 2: {
          if (b === CLOSE_ARRAY && this.at === 1) {
            this.at = 4;
            p++;
            continue;
          }
          const end = this.recordAt(buf, p, n, emit);
          if (end === GIVE_UP) return false;
          if (end === MORE) {
            this.carry = Buffer.from(buf.subarray(p));
            return n - p <= MAX_RECORD_BYTES;
          }
          p = end;
          continue;
        }
        case 3:
          if (b === COMMA) this.at = 2;
          else if (b === CLOSE_ARRAY) this.at = 4;
          else return false;
          p++;
          continue;
        default:
          return false;
      }
    }
    return true;
  }

  /** A record at `p`; once it is whole, the batch is handed on when full. */
  private recordAt(buf: Buffer, p: number, n: number, emit: (batch: B) => void): number {
    const end = this.record(buf, p, n);
    if (end >= 0) {
      this.at = 3;
      if (this.batchLength === this.batchSize) emit(this.take());
    }
    return end;
  }

  /** The bytes are all read: the last batch, or false when the text is not a whole array (the general path says why). */
  end(emit: (batch: B) => void): boolean {
    if (this.at !== 4 || this.carry.length > 0) return false;
    if (this.batchLength > 0) emit(this.take());
    return true;
  }

  private take(): B {
    const batch = this.lines.take(this.batchLength, this.violations);
    this.sent += this.batchLength;
    this.batchLength = 0;
    this.violations = null;
    return batch;
  }

  /** One record at `p` (its first byte): written to the batch; its end, MORE or GIVE_UP. */
  private record(buf: Buffer, p: number, n: number): number {
    this.kinds.fill(ABSENT);
    this.whole = false;
    this.json.depth = 0;
    if (++this.serial === 0x7fffffff) {
      this.serial = 1;
      this.seen.fill(0);
    }
    let end: number;
    if (buf[p] === OPEN_OBJECT) end = this.object(buf, p, n, this.root);
    else {
      // Not an object: mapped whole, for its violation.
      this.whole = true;
      end = this.json.skip(buf, p, n);
    }
    if (end < 0) return end;
    if (!this.whole && this.lines.line(buf, this.found)) {
      this.batchLength++;
      return end;
    }
    return this.mapWhole(buf, p, end) ? end : GIVE_UP;
  }

  /** An object whose keys may be on mapped paths (`node`); at `p` its `{`. */
  private object(buf: Buffer, p: number, n: number, node: Node): number {
    if (++this.json.depth > MAX_DEPTH) return GIVE_UP;
    p = this.json.space(buf, p + 1, n);
    if (p >= n) return MORE;
    if (buf[p] === CLOSE_OBJECT) {
      this.json.depth--;
      return p + 1;
    }
    for (;;) {
      if (buf[p] !== QUOTE) return p >= n ? MORE : GIVE_UP;
      const keyStart = p + 1;
      p = this.json.string(buf, p, n);
      if (p < 0) return p;
      const key = this.json.escaped ? null : this.keyOf(buf, node, keyStart, p - 1);
      if (this.json.escaped && node.keys.length > 0) this.whole = true;
      p = this.json.space(buf, p, n);
      if (p >= n) return MORE;
      if (buf[p] !== COLON) return GIVE_UP;
      p = this.json.space(buf, p + 1, n);
      if (p >= n) return MORE;
      p = key === null ? this.json.skip(buf, p, n) : this.value(buf, p, n, key);
      if (p < 0) return p;
      p = this.json.space(buf, p, n);
      if (p >= n) return MORE;
      const b = buf[p];
      if (b === CLOSE_OBJECT) {
        this.json.depth--;
        return p + 1;
      }
      if (b !== COMMA) return GIVE_UP;
      p = this.json.space(buf, p + 1, n);
      if (p >= n) return MORE;
    }
  }

  /** The key of `node` named by the bytes [from, to), or null. */
  private keyOf(buf: Buffer, node: Node, from: number, to: number): Key | null {
    for (const key of node.keys) if (sameBytes(key.name, buf, from, to - from)) return key;
    return null;
  }

  /** The value of a key on a mapped path, at `p`. */
  private value(buf: Buffer, p: number, n: number, key: Key): number {
    if (this.seen[key.id] === this.serial) this.whole = true;
    this.seen[key.id] = this.serial;
    const b = buf[p]!;
    if (b === OPEN_OBJECT && key.node !== null) {
      if (key.columns.length > 0) this.whole = true;
      return this.object(buf, p, n, key.node);
    }
    const start = p;
    let kind: number;
    if (b === QUOTE) {
      p = this.json.string(buf, p, n);
      kind = STRING;
    } else if (b === MINUS || isDigit(b)) {
      p = this.json.number(buf, p, n);
      kind = NUMBER;
    } else if (isLiteral(b)) {
      p = this.json.literal(buf, p, n);
      kind = b === 0x74 ? TRUE : b === 0x66 ? FALSE : NULL;
    } else {
      p = this.json.skip(buf, p, n);
      kind = OTHER;
    }
    if (p < 0) return p;
    // A null where names are looked for leaves the values under it absent; anything else there is mapped whole.
    if (key.node !== null && kind !== NULL) this.whole = true;
    const flags = kind === STRING ? (this.json.escaped ? ESCAPED : 0) | (this.json.wide ? WIDE : 0) : 0;
    for (const c of key.columns) {
      this.kinds[c] = kind;
      this.starts[c] = start;
      this.ends[c] = p;
      this.flags[c] = flags;
    }
    return p;
  }

  /** The record [start, end) parsed and mapped as on the general path; false when its line cannot be written. */
  private mapWhole(buf: Buffer, start: number, end: number): boolean {
    this.mappedWhole++;
    const record = parseJsonExact(buf.toString('utf8', start, end));
    const found = mapRecord(this.mapping, record, this.scratch, () => true);
    // A record with violations has no values (as mapBatch writes it).
    if (found !== null) this.scratch.fill(null);
    if (!this.lines.row(this.scratch)) return false;
    if (found !== null) (this.violations ??= new Map()).set(this.batchLength, found);
    this.batchLength++;
    return true;
  }
}
