/**
 * Checks that bytes arriving in pieces form one JSON text (RFC 8259, what JSON.parse accepts), without
 * building any value: the submit path's "payload is a JSON text" check for a payload too large to hold.
 * It keeps a stack of open containers and the state of the token it is in, nothing else.
 */

const enum S {
  /** Expecting a value (the root, an array item, an object value). */
  Value,
  /** Expecting the first array item or `]`. */
  ValueOrEnd,
  /** After a value: `,`, the container's end, or the end of the text at the root. */
  After,
  /** Expecting an object key (a string). */
  Key,
  /** Expecting the first key or `}`. */
  KeyOrEnd,
  /** After a key: `:`. */
  Colon,
  /** Inside a string. */
  Str,
  /** After a backslash in a string. */
  Escape,
  /** Reading the 4 hex digits of `\u`. */
  Hex,
  /** Inside true, false or null. */
  Literal,
  /** Inside a number (sub-state in `num`). */
  Number,
  /** After the root value, only whitespace. */
  Done,
}

const enum N {
  Minus,
  Zero,
  Int,
  Dot,
  Frac,
  Exp,
  ExpSign,
  ExpDigits,
}

const ARRAY = 1;
const OBJECT = 2;

const isWs = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
const isHex = (b: number): boolean => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

export class JsonTextCheck {
  /** `maxDepth`: arrays and objects nested deeper than this fail the check (`tooDeep`). */
  constructor(private readonly maxDepth = Number.POSITIVE_INFINITY) {}

  private state = S.Value;
  private readonly stack: number[] = [];
  /** Whether the string being read is an object key. */
  private key = false;
  private hexLeft = 0;
  private literal = '';
  private literalAt = 0;
  private num = N.Minus;
  private position = 0;
  private error: string | null = null;

  /** Whether the check failed because arrays and objects nest deeper than `maxDepth`. */
  tooDeep = false;

  /** The reason the text is not JSON, once known; null while it may still be. */
  get failure(): string | null {
    return this.error;
  }

  private fail(b: number | null, at: number): void {
    this.error =
      b === null
        ? 'unexpected end of the JSON text'
        : `unexpected ${b >= 0x21 && b < 0x7f ? `character "${String.fromCharCode(b)}"` : `byte 0x${b.toString(16).padStart(2, '0')}`} at position ${at}`;
  }

  /** Feeds the next bytes; returns false (and sets `failure`) at the first byte that cannot belong to a JSON text. */
  write(bytes: Uint8Array): boolean {
    if (this.error !== null) return false;
    const n = bytes.length;
    let i = 0;
    while (i < n) {
      const b = bytes[i]!;
      switch (this.state) {
        case S.Str: {
          // The common case: run over plain characters.
          let j = i;
          while (j < n) {
            const c = bytes[j]!;
            if (c === 0x22 || c === 0x5c || c < 0x20) break;
            j++;
          }
          if (j === n) {
            i = n;
            continue;
          }
          const c = bytes[j]!;
          i = j + 1;
          if (c === 0x22) {
            if (this.key) this.state = S.Colon;
            else this.endValue();
          } else if (c === 0x5c) this.state = S.Escape;
          else return this.failAt(c, j);
          continue;
        }
        case S.Escape:
          if (b === 0x75) {
            this.state = S.Hex;
            this.hexLeft = 4;
          } else if (b === 0x22 || b === 0x5c || b === 0x2f || b === 0x62 || b === 0x66 || b === 0x6e || b === 0x72 || b === 0x74) {
            this.state = S.Str;
          } else return this.failAt(b, i);
          i++;
          continue;
        case S.Hex:
          if (!isHex(b)) return this.failAt(b, i);
          if (--this.hexLeft === 0) this.state = S.Str;
          i++;
          continue;
        case S.Literal:
          if (b !== this.literal.charCodeAt(this.literalAt)) return this.failAt(b, i);
          if (++this.literalAt === this.literal.length) this.endValue();
          i++;
          continue;
        case S.Number:
          if (this.numberByte(b)) {
            i++;
            continue;
          }
          if (!this.numberComplete()) return this.failAt(b, i);
          this.endValue();
          continue; // the byte that ended the number is read again in the new state
        default:
          break;
      }
      if (isWs(b)) {
        i++;
        continue;
      }
      switch (this.state) {
        case S.Value:
        case S.ValueOrEnd:
          if (b === 0x5d && this.state === S.ValueOrEnd) {
            this.stack.pop();
            this.endValue();
          } else if (!this.startValue(b)) return this.failAt(b, i);
          break;
        case S.After: {
          const top = this.stack[this.stack.length - 1];
          if (b === 0x2c && top !== undefined) this.state = top === ARRAY ? S.Value : S.Key;
          else if ((b === 0x5d && top === ARRAY) || (b === 0x7d && top === OBJECT)) {
            this.stack.pop();
            this.endValue();
          } else return this.failAt(b, i);
          break;
        }
        case S.Key:
        case S.KeyOrEnd:
          if (b === 0x22) {
            this.key = true;
            this.state = S.Str;
          } else if (b === 0x7d && this.state === S.KeyOrEnd) {
            this.stack.pop();
            this.endValue();
          } else return this.failAt(b, i);
          break;
        case S.Colon:
          if (b !== 0x3a) return this.failAt(b, i);
          this.state = S.Value;
          break;
        default: // Done
          return this.failAt(b, i);
      }
      i++;
    }
    this.position += n;
    return true;
  }

  /** Says whether everything written is one complete JSON text (and sets `failure` if not). */
  end(): boolean {
    if (this.error !== null) return false;
    if (this.state === S.Number && this.numberComplete() && this.stack.length === 0) this.state = S.Done;
    if (this.state !== S.Done) {
      this.fail(null, this.position);
      return false;
    }
    return true;
  }

  private failAt(b: number, i: number): false {
    if (this.error === null) this.fail(b, this.position + i);
    return false;
  }

  private open(container: number): boolean {
    if (this.stack.length >= this.maxDepth) {
      this.tooDeep = true;
      this.error = `arrays and objects nest more than ${this.maxDepth} levels deep`;
      return false;
    }
    this.stack.push(container);
    return true;
  }

  private startValue(b: number): boolean {
    this.key = false;
    if (b === 0x7b) {
      if (!this.open(OBJECT)) return false;
      this.state = S.KeyOrEnd;
    } else if (b === 0x5b) {
      if (!this.open(ARRAY)) return false;
      this.state = S.ValueOrEnd;
    } else if (b === 0x22) {
      this.state = S.Str;
    } else if (b === 0x74 || b === 0x66 || b === 0x6e) {
      this.literal = b === 0x74 ? 'true' : b === 0x66 ? 'false' : 'null';
      this.literalAt = 1;
      this.state = S.Literal;
    } else if (b === 0x2d || isDigit(b)) {
      this.num = b === 0x2d ? N.Minus : b === 0x30 ? N.Zero : N.Int;
      this.state = S.Number;
    } else return false;
    return true;
  }

  private endValue(): void {
    this.key = false;
    this.state = this.stack.length === 0 ? S.Done : S.After;
  }

  /** Advances the number's grammar by one byte; false when the byte is not part of the number. */
  private numberByte(b: number): boolean {
    const digit = isDigit(b);
    switch (this.num) {
      case N.Minus:
        if (!digit) return false;
        this.num = b === 0x30 ? N.Zero : N.Int;
        return true;
      case N.Zero:
      case N.Int:
        if (digit && this.num === N.Int) return true;
        if (b === 0x2e) this.num = N.Dot;
        else if (b === 0x65 || b === 0x45) this.num = N.Exp;
        else return false;
        return true;
      case N.Dot:
        if (!digit) return false;
        this.num = N.Frac;
        return true;
      case N.Frac:
        if (digit) return true;
        if (b === 0x65 || b === 0x45) {
          this.num = N.Exp;
          return true;
        }
        return false;
      case N.Exp:
        if (b === 0x2b || b === 0x2d) this.num = N.ExpSign;
        else if (digit) this.num = N.ExpDigits;
        else return false;
        return true;
      case N.ExpSign:
        if (!digit) return false;
        this.num = N.ExpDigits;
        return true;
      default:
        return digit;
    }
  }

  private numberComplete(): boolean {
    return this.num === N.Zero || this.num === N.Int || this.num === N.Frac || this.num === N.ExpDigits;
  }
}
