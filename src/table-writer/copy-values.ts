/**
 * How the straight readers (json-records.ts) take a record's values: written as COPY text bytes
 * (writeValue, for json-copy.ts) or made the values SQLite binds (readValue, for json-values.ts). A
 * value's own bytes where they are its stored form as sent (writeAsSent, writtenBack, a date-time at
 * offset zero), the field's converter's answer otherwise; COPY text into the growing buffer of a
 * batch's lines (CopyOut).
 */
import { exactNumber } from '../core/exact-json.js';
import { compileConverter, isRealDate, Violation, type Converter, type SqlValue } from '../mapping/convert.js';
import type { CompiledMapping } from '../mapping/engine.js';
import { COLON, MINUS, POINT, SPACE, ZERO, isDigit, sameBytes } from '../mapping/json-bytes.js';
import { fieldMaxLength, type FieldType } from '../tables/model.js';
import { copyPart } from './copy-text.js';
import { ABSENT, ESCAPED, FALSE, NULL, NUMBER, STRING, TRUE, WIDE } from './json-records.js';

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;

const NULL_TEXT = Buffer.from('\\N');
const ONE = Buffer.from('1');
const ZERO_TEXT = Buffer.from('0');

/** A column's field type, as the reader tells them apart (numbers: compared once per value). */
const TEXT_FIELD = 0;
const CODE_FIELD = 1;
const OPTION_FIELD = 2;
const DECIMAL_FIELD = 3;
const INTEGER_FIELD = 4;
const BOOLEAN_FIELD = 5;
const DATETIME_FIELD = 6;
const DATE_FIELD = 7;
const OTHER_FIELD = 8;
const FIELD_KINDS: Readonly<Record<FieldType, number>> = {
  text: TEXT_FIELD,
  code: CODE_FIELD,
  option: OPTION_FIELD,
  decimal: DECIMAL_FIELD,
  integer: INTEGER_FIELD,
  boolean: BOOLEAN_FIELD,
  datetime: DATETIME_FIELD,
  date: DATE_FIELD,
  guid: OTHER_FIELD,
};

/** How a column's value may be written as it is sent. */
export interface ColumnRule {
  /** The field's type (TEXT_FIELD …). */
  readonly kind: number;
  readonly max: number;
  readonly required: boolean;
  /** The declared options' bytes (an option field). */
  readonly options: readonly Buffer[];
  readonly convert: Converter;
  /** A constant column's COPY bytes. */
  readonly constant: Buffer | null;
  /** A constant column's value (or its violation). */
  readonly constantValue: SqlValue | Violation;
}

/** Each column's rule, in the mapping's order. */
export function columnRules(mapping: CompiledMapping): ColumnRule[] {
  return mapping.columns.map((column) => {
    const { field } = column;
    const constant = column.path === null ? column.read(undefined) : null;
    const part = constant === null || constant instanceof Violation ? null : copyPart(constant);
    return {
      kind: FIELD_KINDS[field.type],
      max: fieldMaxLength(field) ?? Number.MAX_SAFE_INTEGER,
      required: column.required,
      options: (field.options ?? []).map((o) => Buffer.from(o)),
      convert: compileConverter(field),
      constant: column.path === null ? Buffer.from(part ?? '\\N') : null,
      constantValue: constant,
    };
  });
}

/**
 * Writes the ASCII text [from, to) as it is sent, when a text, code or option field (`rule`) stores it
 * so: false (and nothing written) otherwise. A text or code is checked as it is copied.
 */
export function writeAsSent(out: CopyOut, buf: Buffer, rule: ColumnRule, from: number, to: number): boolean {
  const length = to - from;
  const { kind } = rule;
  if (kind === OPTION_FIELD) return rule.options.some((option) => sameBytes(option, buf, from, length)) && out.bytes(buf, from, to);
  if ((kind !== TEXT_FIELD && kind !== CODE_FIELD) || length === 0 || length > rule.max) return false;
  const code = kind === CODE_FIELD;
  if (code && (buf[from] === SPACE || buf[to - 1] === SPACE)) return false;
  out.room(length);
  const target = out.buf;
  let at = out.pos;
  let blank = true;
  for (let i = from; i < to; i++) {
    const b = buf[i]!;
    if (b !== SPACE) blank = false;
    if (code && b >= LOWER_A && b <= LOWER_Z) return false;
    target[at++] = b;
  }
  if (blank) return false;
  out.pos = at;
  return true;
}

/**
 * Whether the JSON number [start, end) is written back the same by `'' + Number(text)` (copy-text.ts):
 * no exponent, at most 15 digits, no trailing zero in a fraction, not `-0`, not below 1e-6; for an
 * integer field, no fraction.
 */
export function writtenBack(buf: Buffer, start: number, end: number, integer: boolean): boolean {
  let p = start;
  if (buf[p] === MINUS) p++;
  const intStart = p;
  while (p < end && isDigit(buf[p]!)) p++;
  const intDigits = p - intStart;
  const zeroInt = intDigits === 1 && buf[intStart] === ZERO;
  if (p === end) return intDigits <= 15 && !(zeroInt && intStart > start);
  if (integer || buf[p] !== POINT) return false;
  const fracStart = ++p;
  while (p < end && isDigit(buf[p]!)) p++;
  if (p !== end || buf[end - 1] === ZERO || intDigits + (end - fracStart) > 15) return false;
  if (!zeroInt) return true;
  let zeros = 0;
  while (buf[fracStart + zeros] === ZERO) zeros++;
  return zeros <= 5;
}

/**
 * Writes a value (`kind`, its bytes [start, end) of `buf`, a string's `flags`) of a column with `rule`;
 * false when it breaks the rule (the record is then mapped whole).
 */
export function writeValue(out: CopyOut, buf: Buffer, rule: ColumnRule, kind: number, start: number, end: number, flags: number): boolean {
  if (rule.constant !== null) return out.bytes(rule.constant, 0, rule.constant.length);
  switch (kind) {
    case ABSENT:
    case NULL:
      if (rule.required) return false;
      return out.bytes(NULL_TEXT, 0, 2);
    case STRING:
      if (flags === 0 && writeAsSent(out, buf, rule, start + 1, end - 1)) return true;
      if (flags === 0 && rule.kind === DATETIME_FIELD && writeUtcDateTime(out, buf, start + 1, end - 1)) return true;
      break;
    case NUMBER:
      if ((rule.kind === DECIMAL_FIELD || rule.kind === INTEGER_FIELD) && writtenBack(buf, start, end, rule.kind === INTEGER_FIELD))
        return out.bytes(buf, start, end);
      break;
    case TRUE:
    case FALSE:
      if (rule.kind === BOOLEAN_FIELD) return out.bytes(kind === TRUE ? ONE : ZERO_TEXT, 0, 1);
      break;
    default:
      return false;
  }
  const value = rule.convert(parsed(buf, kind, start, end, flags));
  if (value instanceof Violation || (value === null && rule.required)) return false;
  if (value === null) return out.bytes(NULL_TEXT, 0, 2);
  // A number, and a date-time or date (stored in a fixed ASCII form), need no escapes.
  const part = typeof value === 'number' || rule.kind === DATETIME_FIELD || rule.kind === DATE_FIELD ? '' + value : copyPart(value);
  if (part === undefined) return false;
  out.text(part);
  return true;
}

/** A value that breaks its field's rule (readValue): the record is then mapped whole. */
export const BROKEN = Symbol('broken');

/**
 * The value a column with `rule` binds for a value (`kind`, its bytes [start, end) of `buf`, a string's
 * `flags`), for SQLite: the same value as writeValue writes, as the field's converter makes it; BROKEN
 * when it breaks the rule. A value taken as sent is checked by writing it into `scratch`.
 */
export function readValue(
  scratch: CopyOut,
  buf: Buffer,
  rule: ColumnRule,
  kind: number,
  start: number,
  end: number,
  flags: number,
): SqlValue | typeof BROKEN {
  if (rule.constant !== null) {
    const value = rule.constantValue;
    return value instanceof Violation || (value === null && rule.required) ? BROKEN : value;
  }
  scratch.pos = 0;
  switch (kind) {
    case ABSENT:
    case NULL:
      return rule.required ? BROKEN : null;
    case STRING:
      if (flags === 0 && writeAsSent(scratch, buf, rule, start + 1, end - 1)) return buf.toString('latin1', start + 1, end - 1);
      if (flags === 0 && rule.kind === DATETIME_FIELD && writeUtcDateTime(scratch, buf, start + 1, end - 1))
        return scratch.buf.toString('latin1', 0, scratch.pos);
      break;
    case NUMBER:
      if ((rule.kind === DECIMAL_FIELD || rule.kind === INTEGER_FIELD) && writtenBack(buf, start, end, rule.kind === INTEGER_FIELD))
        return Number(buf.toString('latin1', start, end));
      break;
    case TRUE:
    case FALSE:
      if (rule.kind === BOOLEAN_FIELD) return kind === TRUE ? 1 : 0;
      break;
    default:
      return BROKEN;
  }
  const value = rule.convert(parsed(buf, kind, start, end, flags));
  return value instanceof Violation || (value === null && rule.required) ? BROKEN : value;
}

/** The value JSON.parse (parseJsonExact) makes of the bytes [start, end). */
function parsed(buf: Buffer, kind: number, start: number, end: number, flags: number): unknown {
  switch (kind) {
    case STRING:
      if ((flags & ESCAPED) !== 0) return JSON.parse(buf.toString('utf8', start, end));
      return (flags & WIDE) !== 0 ? buf.toString('utf8', start + 1, end - 1) : buf.toString('latin1', start + 1, end - 1);
    case NUMBER:
      return exactNumber(buf.toString('latin1', start, end));
    case TRUE:
      return true;
    case FALSE:
      return false;
    default:
      return null;
  }
}

/** COPY text bytes written into a growing buffer, handed on a batch at a time (its memory goes with it). */
export class CopyOut {
  buf = Buffer.allocUnsafeSlow(64 * 1024);
  pos = 0;

  /** The bytes written, and a new buffer for the next batch (about as large). */
  take(): Uint8Array {
    const taken = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafeSlow(Math.max(64 * 1024, this.pos + (this.pos >> 2)));
    this.pos = 0;
    return taken;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  bytes(from: Buffer, start: number, end: number): boolean {
    const length = end - start;
    this.room(length);
    const out = this.buf;
    let at = this.pos;
    for (let i = start; i < end; i++) out[at++] = from[i]!;
    this.pos = at;
    return true;
  }

  /** Writes `s` as UTF-8; ASCII byte by byte (most values are short). */
  text(s: string): void {
    const length = s.length;
    this.room(length * 3);
    const out = this.buf;
    let at = this.pos;
    for (let i = 0; i < length; i++) {
      const code = s.charCodeAt(i);
      if (code >= 0x80) {
        this.pos = at + out.write(s.slice(i), at, 'utf8');
        return;
      }
      out[at++] = code;
    }
    this.pos = at;
  }

  room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

/** The number written by `n` digits at `at` (before `to`), or -1. */
function digits(buf: Buffer, at: number, n: number, to: number): number {
  if (at + n > to) return -1;
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = buf[i]! - ZERO;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * A date-time [from, to) at offset zero (`Z`, `+00:00` or `-00:00`) written in its stored form, as
 * parseIsoDateTime writes it (mapping/convert.ts): its digits as sent, `T`, seconds `00` when absent,
 * the fraction cut or filled to milliseconds, `Z`. False for anything else (another offset, or no
 * date-time): the converter decides then.
 */
function writeUtcDateTime(out: CopyOut, buf: Buffer, from: number, to: number): boolean {
  const length = to - from;
  if (length < 17 || buf[from + 4] !== MINUS || buf[from + 7] !== MINUS || buf[from + 13] !== COLON) return false;
  const t = buf[from + 10];
  if (t !== 0x54 && t !== 0x74) return false;
  const year = digits(buf, from, 4, to);
  const hour = digits(buf, from + 11, 2, to);
  const minute = digits(buf, from + 14, 2, to);
  if (year < 0 || !isRealDate(year, digits(buf, from + 5, 2, to), digits(buf, from + 8, 2, to))) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return false;
  let at = from + 16;
  let second = -1;
  let fraction = 0;
  let fractionDigits = 0;
  if (buf[at] === COLON) {
    second = digits(buf, at + 1, 2, to);
    if (second < 0 || second > 59) return false;
    at += 3;
    if (buf[at] === POINT) {
      while (at + 1 + fractionDigits < to && fractionDigits < 9 && isDigit(buf[at + 1 + fractionDigits]!)) fractionDigits++;
      if (fractionDigits === 0) return false;
      fraction = at + 1;
      at += 1 + fractionDigits;
    }
  }
  const zone = buf[at];
  const utc =
    ((zone === 0x5a || zone === 0x7a) && at + 1 === to) ||
    ((zone === 0x2b || zone === MINUS) &&
      at + 6 === to &&
      buf[at + 3] === COLON &&
      digits(buf, at + 1, 2, to) === 0 &&
      digits(buf, at + 4, 2, to) === 0);
  if (!utc) return false;
  out.bytes(buf, from, from + 10);
  out.byte(0x54);
  out.bytes(buf, from + 11, from + 16);
  out.byte(COLON);
  if (second < 0) out.bytes(TWO_ZEROS, 0, 2);
  else out.bytes(buf, from + 17, from + 19);
  out.byte(POINT);
  for (let i = 0; i < 3; i++) out.byte(i < fractionDigits ? buf[fraction + i]! : ZERO);
  out.byte(0x5a);
  return true;
}

const TWO_ZEROS = Buffer.from('00');
