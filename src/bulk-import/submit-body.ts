/**
 * Reads a submission's JSON body as its bytes arrive, without holding it whole. The body is a JSON
 * object whose `payload` member is a string holding a JSON text; that string is unescaped as it
 * arrives and handed on as UTF-8 bytes (`onPayload`, gathered per piece received), whatever the boundaries of the pieces
 * that came in (an escape, a `\uXXXX` or a surrogate pair may be cut anywhere). Every other member is
 * small (`integrationSortingOrder`, OData annotations, or a mistake): its text is kept, up to a limit,
 * and parsed with JSON.parse once complete, so that the route's schema judges it as it judges a small
 * body. A body that is not an object is kept the same way.
 *
 * A lone surrogate (`\uD800` without its pair), which UTF-8 cannot hold, is written into the payload
 * text as its escape `\uD800`, which means the same in the payload's JSON: the value reaches the
 * mapping as sent, and is refused there with a record error, never altered. Malformed JSON is an
 * AppError (400 malformedBody), as fastify's parser says it.
 */
import { AppError } from '../core/errors.js';

export interface SubmitBodyEvents {
  /** A member other than a string `payload` is complete. */
  onMember(key: string, value: unknown): void;
  /** The string `payload` begins. */
  onPayloadStart(): void;
  /** The next unescaped bytes of the payload. The array is only valid during the call. */
  onPayload(bytes: Uint8Array): void;
  /** The string `payload` is complete. */
  onPayloadEnd(): void;
}

/** What the body was, once complete. */
export type ScannedBody = { readonly object: true } | { readonly object: false; readonly value: unknown };

const enum S {
  Start,
  KeyOrEnd,
  Key,
  KeyString,
  KeyEscape,
  Colon,
  Value,
  Raw,
  Payload,
  PayloadEscape,
  PayloadHex,
  After,
  Done,
  RawRoot,
}

const isWs = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** `\uXXXX` as ASCII bytes: a lone surrogate kept in the payload's JSON text. */
const escapeOf = (unit: number): Uint8Array => Buffer.from(`\\u${unit.toString(16).padStart(4, '0')}`, 'latin1');

const SIMPLE_ESCAPES: Record<number, number> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x2f: 0x2f,
  0x62: 0x08,
  0x66: 0x0c,
  0x6e: 0x0a,
  0x72: 0x0d,
  0x74: 0x09,
};

function utf8(code: number): Uint8Array {
  if (code < 0x80) return Uint8Array.of(code);
  if (code < 0x800) return Uint8Array.of(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
  if (code < 0x10000) return Uint8Array.of(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  return Uint8Array.of(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
}

export class SubmitBodyScanner {
  private state = S.Start;
  private position = 0;
  private keyBytes: number[] = [];
  private key = '';
  private readonly seen = new Set<string>();
  // A member's raw text (or the whole body when it is not an object).
  private raw: Buffer[] = [];
  private rawBytes = 0;
  private rawDepth = 0;
  private rawInString = false;
  private rawEscape = false;
  private rawScalar = false;
  // The payload string's escapes.
  private hex = 0;
  private hexLeft = 0;
  private pendingHigh = 0;
  // Unescaped payload bytes gathered and handed on together: an escape every few characters must not
  // cost a call each.
  private readonly out = Buffer.allocUnsafe(64 * 1024);
  private outLen = 0;

  constructor(
    private readonly events: SubmitBodyEvents,
    /** The most bytes a member other than the payload (or a body that is not an object) may take. */
    private readonly maxMemberBytes: number,
  ) {}

  private malformed(reason: string): AppError {
    return new AppError(400, 'malformedBody', `The request body is not valid JSON: ${reason}.`);
  }

  private unexpected(b: number, i: number): AppError {
    const what = b >= 0x21 && b < 0x7f ? `character "${String.fromCharCode(b)}"` : `byte 0x${b.toString(16).padStart(2, '0')}`;
    return this.malformed(`unexpected ${what} at position ${this.position + i}`);
  }

  /** Reads the next bytes of the body; throws an AppError when they cannot be part of a valid body. */
  write(bytes: Buffer): void {
    const n = bytes.length;
    let i = 0;
    while (i < n) {
      const b = bytes[i]!;
      switch (this.state) {
        case S.Payload: {
          let j = i;
          while (j < n) {
            const c = bytes[j]!;
            if (c === 0x22 || c === 0x5c || c < 0x20) break;
            j++;
          }
          if (j > i) {
            this.flushHigh();
            this.putRange(bytes, i, j);
          }
          if (j === n) return this.advance(n);
          const c = bytes[j]!;
          if (c === 0x22) {
            this.flushHigh();
            this.flushOut();
            this.events.onPayloadEnd();
            this.state = S.After;
          } else if (c === 0x5c) {
            this.state = S.PayloadEscape;
          } else throw this.unexpected(c, j);
          i = j + 1;
          continue;
        }
        case S.PayloadEscape: {
          if (b === 0x75) {
            this.state = S.PayloadHex;
            this.hex = 0;
            this.hexLeft = 4;
          } else {
            const out = SIMPLE_ESCAPES[b];
            if (out === undefined) throw this.unexpected(b, i);
            this.flushHigh();
            this.putByte(out);
            this.state = S.Payload;
          }
          i++;
          continue;
        }
        case S.PayloadHex: {
          const d = b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x41 && b <= 0x46 ? b - 0x37 : b >= 0x61 && b <= 0x66 ? b - 0x57 : -1;
          if (d < 0) throw this.unexpected(b, i);
          this.hex = this.hex * 16 + d;
          if (--this.hexLeft === 0) {
            this.codeUnit(this.hex);
            this.state = S.Payload;
          }
          i++;
          continue;
        }
        case S.KeyString: {
          if (b === 0x22) {
            this.endKey(i);
          } else if (b === 0x5c) {
            this.keyBytes.push(b);
            this.state = S.KeyEscape;
          } else if (b < 0x20) {
            throw this.unexpected(b, i);
          } else {
            if (this.keyBytes.length >= 1024) throw this.malformed('a property name is longer than 1024 bytes');
            this.keyBytes.push(b);
          }
          i++;
          continue;
        }
        case S.KeyEscape:
          this.keyBytes.push(b);
          this.state = S.KeyString;
          i++;
          continue;
        case S.Raw: {
          const end = this.rawScan(bytes, i);
          this.keepRaw(bytes.subarray(i, end < 0 ? n : end));
          if (end < 0) return this.advance(n);
          this.endMember();
          i = end;
          continue;
        }
        case S.RawRoot:
          this.keepRaw(bytes.subarray(i));
          return this.advance(n);
        default:
          break;
      }
      if (isWs(b)) {
        i++;
        continue;
      }
      switch (this.state) {
        case S.Start:
          if (b === 0x7b) this.state = S.KeyOrEnd;
          else {
            this.state = S.RawRoot;
            continue;
          }
          break;
        case S.KeyOrEnd:
        case S.Key:
          if (b === 0x22) {
            this.keyBytes = [];
            this.state = S.KeyString;
          } else if (b === 0x7d && this.state === S.KeyOrEnd) this.state = S.Done;
          else throw this.unexpected(b, i);
          break;
        case S.Colon:
          if (b !== 0x3a) throw this.unexpected(b, i);
          this.state = S.Value;
          break;
        case S.Value:
          if (this.key === 'payload' && b === 0x22) {
            this.state = S.Payload;
            this.pendingHigh = 0;
            this.events.onPayloadStart();
            break;
          }
          this.raw = [];
          this.rawBytes = 0;
          this.rawDepth = 0;
          this.rawInString = false;
          this.rawEscape = false;
          this.rawScalar = b !== 0x7b && b !== 0x5b && b !== 0x22;
          this.state = S.Raw;
          continue;
        case S.After:
          if (b === 0x2c) this.state = S.Key;
          else if (b === 0x7d) this.state = S.Done;
          else throw this.unexpected(b, i);
          break;
        default: // Done
          throw this.unexpected(b, i);
      }
      i++;
    }
    this.advance(n);
  }

  /** The body is complete: says what it was, or throws when it ended too early. */
  end(): ScannedBody {
    if (this.state === S.RawRoot) {
      try {
        return { object: false, value: JSON.parse(Buffer.concat(this.raw).toString('utf8')) };
      } catch (err) {
        throw this.malformed((err as Error).message);
      }
    }
    if (this.state !== S.Done) throw this.malformed('unexpected end of the body');
    return { object: true };
  }

  private advance(n: number): void {
    this.flushOut();
    this.position += n;
  }

  private flushOut(): void {
    if (this.outLen === 0) return;
    const length = this.outLen;
    this.outLen = 0;
    this.events.onPayload(this.out.subarray(0, length));
  }

  private put(bytes: Uint8Array): void {
    if (bytes.length > this.out.length - this.outLen) {
      this.flushOut();
      if (bytes.length > this.out.length) {
        this.events.onPayload(bytes);
        return;
      }
    }
    this.out.set(bytes, this.outLen);
    this.outLen += bytes.length;
  }

  /** `bytes[from, to)`, copied without making a view of them. */
  private putRange(bytes: Buffer, from: number, to: number): void {
    const length = to - from;
    if (length > this.out.length - this.outLen) {
      this.flushOut();
      if (length > this.out.length) {
        this.events.onPayload(bytes.subarray(from, to));
        return;
      }
    }
    if (length < 16) for (let k = from; k < to; k++) this.out[this.outLen++] = bytes[k]!;
    else {
      bytes.copy(this.out, this.outLen, from, to);
      this.outLen += length;
    }
  }

  private putByte(b: number): void {
    if (this.outLen === this.out.length) this.flushOut();
    this.out[this.outLen++] = b;
  }

  private endKey(i: number): void {
    let key: string;
    try {
      key = JSON.parse(`"${Buffer.from(this.keyBytes).toString('utf8')}"`) as string;
    } catch {
      throw this.malformed(`a property name before position ${this.position + i} is not a valid string`);
    }
    if (this.seen.has(key)) throw new AppError(400, 'invalidRequest', `body has the property "${key}" twice`);
    this.seen.add(key);
    this.key = key;
    this.state = S.Colon;
  }

  private keepRaw(bytes: Buffer): void {
    this.rawBytes += bytes.length;
    if (this.rawBytes > this.maxMemberBytes) {
      throw new AppError(
        413,
        'bodyTooLarge',
        this.state === S.RawRoot
          ? `The request body is not a JSON object with a payload string, and larger than ${this.maxMemberBytes} bytes.`
          : `body.${this.key} is larger than ${this.maxMemberBytes} bytes; only payload may be large.`,
      );
    }
    this.raw.push(Buffer.from(bytes));
  }

  /** Finds where the member's value ends in `bytes` from `i`: the index after it, or -1 if it goes on. */
  private rawScan(bytes: Buffer, i: number): number {
    for (let j = i; j < bytes.length; j++) {
      const c = bytes[j]!;
      if (this.rawScalar) {
        if (c === 0x2c || c === 0x7d || c === 0x5d || isWs(c)) return j;
        continue;
      }
      if (this.rawInString) {
        if (this.rawEscape) this.rawEscape = false;
        else if (c === 0x5c) this.rawEscape = true;
        else if (c === 0x22) {
          this.rawInString = false;
          if (this.rawDepth === 0) return j + 1;
        }
        continue;
      }
      if (c === 0x22) this.rawInString = true;
      else if (c === 0x7b || c === 0x5b) this.rawDepth++;
      else if (c === 0x7d || c === 0x5d) {
        if (--this.rawDepth === 0) return j + 1;
      }
    }
    return -1;
  }

  private endMember(): void {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.concat(this.raw).toString('utf8'));
    } catch (err) {
      throw this.malformed(`the value of "${this.key}": ${(err as Error).message}`);
    }
    this.raw = [];
    this.events.onMember(this.key, value);
    this.state = S.After;
  }

  /** A high surrogate not followed by its low half is written as its escape. */
  private flushHigh(): void {
    if (this.pendingHigh !== 0) {
      const unit = this.pendingHigh;
      this.pendingHigh = 0;
      this.put(escapeOf(unit));
    }
  }

  private codeUnit(unit: number): void {
    if (this.pendingHigh !== 0 && unit >= 0xdc00 && unit <= 0xdfff) {
      const code = 0x10000 + ((this.pendingHigh - 0xd800) << 10) + (unit - 0xdc00);
      this.pendingHigh = 0;
      this.put(utf8(code));
      return;
    }
    this.flushHigh();
    if (unit >= 0xd800 && unit <= 0xdbff) this.pendingHigh = unit;
    else if (unit >= 0xdc00 && unit <= 0xdfff) this.put(escapeOf(unit));
    else if (unit < 0x80) this.putByte(unit);
    else this.put(utf8(unit));
  }
}
