/**
 * A JSON text checked byte by byte as it is read, in UTF-8 bytes that may end anywhere: each reader
 * answers where the value at a position ends, MORE when the bytes end before it does, or GIVE_UP when
 * they are not JSON (or nest deeper than MAX_DEPTH). It follows JSON's grammar exactly (RFC 8259):
 * strings and their escapes, no control character in a string, numbers without leading zeros, the
 * three literals, objects and arrays. Used by json-records.ts, which reads records straight from bytes.
 */
export const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const MINUS = 0x2d;
export const POINT = 0x2e;
export const ZERO = 0x30;
const NINE = 0x39;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

/** Answers of the readers: the bytes end before the value does; they are not JSON (or nest too deep). */
export const MORE = -1;
export const GIVE_UP = -2;

/** Nesting at most; deeper is given up on. */
export const MAX_DEPTH = 64;

const LITERALS: readonly (readonly number[])[] = [
  [0x74, 0x72, 0x75, 0x65],
  [0x66, 0x61, 0x6c, 0x73, 0x65],
  [0x6e, 0x75, 0x6c, 0x6c],
];

export const isSpace = (b: number): boolean => b === SPACE || b === LF || b === CR || b === TAB;
export const isDigit = (b: number): boolean => b >= ZERO && b <= NINE;
const isHex = (b: number): boolean => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
/** Whether `length` bytes of `buf` from `from` are the bytes of `name`. */
export function sameBytes(name: Uint8Array, buf: Buffer, from: number, length: number): boolean {
  if (name.length !== length) return false;
  let i = 0;
  while (i < length && name[i] === buf[from + i]) i++;
  return i === length;
}

/** The first byte of `true`, `false` or `null`. */
export const isLiteral = (b: number): boolean => b === 0x74 || b === 0x66 || b === 0x6e;

/**
 * What a byte is inside a string, read from a table (one load and one compare for the plain bytes that
 * make up most of a string): it ends the string, starts an escape, is a control character (not allowed),
 * is beyond ASCII, or is plain.
 */
const PLAIN = 0;
const END = 1;
const ESCAPE = 2;
const CONTROL = 3;
const WIDE_BYTE = 4;
const IN_STRING = new Uint8Array(256).map((_, b) =>
  b === QUOTE ? END : b === BACKSLASH ? ESCAPE : b < SPACE ? CONTROL : b >= 0x80 ? WIDE_BYTE : PLAIN,
);

export class JsonBytes {
  /** Of the last string read: it has escapes; it has bytes beyond ASCII. */
  escaped = false;
  wide = false;
  /** Objects and arrays open (the caller's own count too: a record's object). */
  depth = 0;

  space(buf: Buffer, p: number, n: number): number {
    while (p < n && isSpace(buf[p]!)) p++;
    return p;
  }

  /** A string at `p` (its quote): the position after its closing quote; sets `escaped` and `wide`. */
  string(buf: Buffer, p: number, n: number): number {
    let escaped = false;
    let wide = false;
    for (p++; p < n; p++) {
      const kind = IN_STRING[buf[p]!]!;
      if (kind === PLAIN) continue;
      if (kind === END) {
        this.escaped = escaped;
        this.wide = wide;
        return p + 1;
      }
      if (kind === WIDE_BYTE) wide = true;
      else if (kind === CONTROL) return GIVE_UP;
      else {
        escaped = true;
        if (++p >= n) return MORE;
        const e = buf[p]!;
        if (e === 0x75) {
          if (p + 4 >= n) return MORE;
          for (let i = 1; i <= 4; i++) if (!isHex(buf[p + i]!)) return GIVE_UP;
          p += 4;
        } else if (!(e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74))
          return GIVE_UP;
      }
    }
    return MORE;
  }

  /** A number at `p`, as JSON writes one: the position after it. */
  number(buf: Buffer, p: number, n: number): number {
    if (buf[p] === MINUS) p++;
    if (p >= n) return MORE;
    if (buf[p] === ZERO) p++;
    else {
      if (!isDigit(buf[p]!)) return GIVE_UP;
      while (p < n && isDigit(buf[p]!)) p++;
    }
    if (p < n && buf[p] === POINT) {
      p++;
      if (p >= n) return MORE;
      if (!isDigit(buf[p]!)) return GIVE_UP;
      while (p < n && isDigit(buf[p]!)) p++;
    }
    if (p < n && (buf[p] === 0x65 || buf[p] === 0x45)) {
      p++;
      if (p < n && (buf[p] === 0x2b || buf[p] === MINUS)) p++;
      if (p >= n) return MORE;
      if (!isDigit(buf[p]!)) return GIVE_UP;
      while (p < n && isDigit(buf[p]!)) p++;
    }
    // The number may go on in the next bytes.
    return p >= n ? MORE : p;
  }

  literal(buf: Buffer, p: number, n: number): number {
    const b = buf[p];
    const word = LITERALS[b === 0x74 ? 0 : b === 0x66 ? 1 : 2]!;
    for (let i = 0; i < word.length; i++, p++) {
      if (p >= n) return MORE;
      if (buf[p] !== word[i]) return GIVE_UP;
    }
    return p;
  }

  /** Any value at `p`, checked as JSON and passed over. */
  skip(buf: Buffer, p: number, n: number): number {
    const b = buf[p]!;
    if (b === QUOTE) return this.string(buf, p, n);
    if (b === MINUS || isDigit(b)) return this.number(buf, p, n);
    if (isLiteral(b)) return this.literal(buf, p, n);
    if (b !== OPEN_OBJECT && b !== OPEN_ARRAY) return GIVE_UP;
    if (++this.depth > MAX_DEPTH) return GIVE_UP;
    const close = b === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
    p = this.space(buf, p + 1, n);
    if (p >= n) return MORE;
    if (buf[p] === close) {
      this.depth--;
      return p + 1;
    }
    for (;;) {
      if (close === CLOSE_OBJECT) {
        if (buf[p] !== QUOTE) return GIVE_UP;
        p = this.string(buf, p, n);
        if (p < 0) return p;
        p = this.space(buf, p, n);
        if (p >= n) return MORE;
        if (buf[p] !== COLON) return GIVE_UP;
        p = this.space(buf, p + 1, n);
        if (p >= n) return MORE;
      }
      p = this.skip(buf, p, n);
      if (p < 0) return p;
      p = this.space(buf, p, n);
      if (p >= n) return MORE;
      if (buf[p] === close) {
        this.depth--;
        return p + 1;
      }
      if (buf[p] !== COMMA) return GIVE_UP;
      p = this.space(buf, p + 1, n);
      if (p >= n) return MORE;
    }
  }
}
