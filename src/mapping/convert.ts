/**
 * Value conversion to a target field's type. A converter is built once per field and then called for
 * every record, so everything that can be (regexes, the option lookup, the violation objects and
 * their messages) is prepared up front and the per-value path stays branch-and-compare.
 *
 * A converter returns the SQL value to store, `null` when the value is absent, or a `Violation`
 * naming the rule broken. Absent means missing, null or the empty string, and also a blank string
 * for the word-valued types text, code, option and guid (for numbers and dates a blank string is just
 * not a valid value). Whether an absent value is allowed is decided by the caller, which knows the
 * mapping. Text and code values are stored as sent (a code not in its form is refused, see
 * codeConverter).
 */
import { holdsExactly, NumberText } from '../core/exact-json.js';
import { fieldMaxLength, type TargetField } from '../tables/model.js';

export type SqlValue = string | number | null;

/** One instance per rule per field, made when the converter is built and returned on every failure. */
export class Violation {
  constructor(readonly rule: string) {}
}

export type Converter = (value: unknown) => SqlValue | Violation;

/** Length in characters (code points), computed only when the UTF-16 length already exceeds the limit. */
function tooLong(s: string, max: number): boolean {
  if (s.length <= max) return false;
  let n = 0;
  for (const _ of s) if (++n > max) return true;
  return false;
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const GUID =
  /^(?:\{([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\}|([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function isRealDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
  return day <= days;
}

/** Digits at `s[start..start+n)` as a number, or -1. */
function digitsAt(s: string, start: number, n: number): number {
  let v = 0;
  for (let i = start; i < start + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date and back (H. Hinnant's civil calendar algorithms).
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, doy - Math.floor((153 * mp + 2) / 5) + 1];
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n));

/**
 * A strict ISO 8601 date-time with an explicit zone (`YYYY-MM-DDThh:mm[:ss[.fraction]](Z|±hh:mm)`),
 * as the instant in UTC in `toISOString()` form, or undefined. Hand-written instead of regex + Date:
 * it runs once per record and is the costliest conversion (a regex, Date.parse and toISOString
 * together cost several times more).
 */
export function parseIsoDateTime(s: string): string | undefined {
  const len = s.length;
  if (len < 17 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58) return undefined;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116) return undefined; // T or t
  const year = digitsAt(s, 0, 4);
  const month = digitsAt(s, 5, 2);
  const day = digitsAt(s, 8, 2);
  const hour = digitsAt(s, 11, 2);
  const minute = digitsAt(s, 14, 2);
  if (year < 0 || !isRealDate(year, month, day) || hour < 0 || hour > 23 || minute < 0 || minute > 59) return undefined;
  let pos = 16;
  let second = 0;
  let ms = 0;
  if (s.charCodeAt(pos) === 58) {
    second = digitsAt(s, pos + 1, 2);
    if (second < 0 || second > 59) return undefined;
    pos += 3;
    if (s.charCodeAt(pos) === 46) {
      let end = pos + 1;
      while (end < len && end - pos <= 9 && digitsAt(s, end, 1) >= 0) end++;
      const digits = end - pos - 1;
      if (digits === 0 || digits > 9) return undefined;
      // Milliseconds are what the stored form keeps; further digits are cut, as Date does.
      ms = digitsAt(s, pos + 1, Math.min(digits, 3)) * (digits === 1 ? 100 : digits === 2 ? 10 : 1);
      pos = end;
    }
  }
  let offset = 0;
  const z = s.charCodeAt(pos);
  if (z === 90 || z === 122) {
    if (pos + 1 !== len) return undefined;
  } else if (z === 43 || z === 45) {
    const oh = digitsAt(s, pos + 1, 2);
    const om = digitsAt(s, pos + 4, 2);
    if (pos + 6 !== len || s.charCodeAt(pos + 3) !== 58 || oh < 0 || oh > 23 || om < 0 || om > 59) return undefined;
    offset = (z === 43 ? 1 : -1) * (oh * 60 + om);
  } else {
    return undefined;
  }

  if (offset === 0 && len === 24 && s.charCodeAt(19) === 46 && t === 84 && z === 90) return s; // already in stored form
  let y = year;
  let mo = month;
  let d = day;
  let minutes = hour * 60 + minute - offset;
  if (minutes < 0 || minutes >= 1440) {
    const dayShift = Math.floor(minutes / 1440);
    minutes -= dayShift * 1440;
    [y, mo, d] = civilFromDays(daysFromCivil(year, month, day) + dayShift);
    // Outside four-digit years toISOString has its own (±YYYYYY) form.
    if (y < 0 || y > 9999) return new Date((daysFromCivil(y, mo, d) * 1440 + minutes) * 60_000 + second * 1000 + ms).toISOString();
  }
  const h = Math.floor(minutes / 60);
  const yyyy = y >= 1000 ? String(y) : String(y).padStart(4, '0');
  return `${yyyy}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(minutes - h * 60)}:${pad2(second)}.${pad3(ms)}Z`;
}

/** Empty or only white space; the first character settles almost every real value without trimming. */
function isBlank(s: string): boolean {
  if (s.length === 0) return true;
  const c = s.charCodeAt(0);
  return (c <= 32 || c === 0xa0 || c >= 0x1680) && s.trim().length === 0;
}

/** A value's own white space at either end (the first and last characters settle almost every value). */
/** A character that String.prototype.trim may remove (a cheap superset: codes up to space, no-break space, and from U+1680 on). */
const maybeSpace = (c: number): boolean => c <= 32 || c === 0xa0 || c >= 0x1680;

function hasOuterSpace(s: string): boolean {
  return (maybeSpace(s.charCodeAt(0)) || maybeSpace(s.charCodeAt(s.length - 1))) && s.trim().length !== s.length;
}

/** Has a letter that upper-casing would change; ASCII is settled by its codes, anything else by toUpperCase. */
function hasLowerCase(s: string): boolean {
  let other = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) return true;
    if (c > 127) other = true;
  }
  return other && s.toUpperCase() !== s;
}

/** ES2024's String.prototype.isWellFormed (in Node 20), typed here while the project's lib is ES2023. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function textConverter(field: TargetField): Converter {
  const max = fieldMaxLength(field) ?? Number.MAX_SAFE_INTEGER;
  const notText = new Violation('is not a text value');
  const long = new Violation(`exceeds ${max} characters`);
  // A lone surrogate (\ud800 without its pair) is no character: no database can store it as sent.
  const notUnicode = new Violation('is not valid Unicode text (it holds half of a surrogate pair, such as \\ud800, alone)');
  // PostgreSQL's text cannot hold U+0000; SQLite could, but both databases keep the same data.
  const nul = new Violation('contains the character U+0000, which the database cannot store');
  return (value) => {
    let s: string;
    if (typeof value === 'string') s = value;
    else if (typeof value === 'number' || typeof value === 'boolean') s = String(value);
    else if (value === undefined || value === null) return null;
    else if (value instanceof NumberText) s = value.text;
    else return notText;
    if (isBlank(s)) return null;
    if (!isWellFormed(s)) return notUnicode;
    if (s.includes('\u0000')) return nul;
    return tooLong(s, max) ? long : s;
  };
}

/**
 * A code (a key such as a customer number or a country code) is text in capitals without white space
 * at either end, so that keys compare the same way everywhere. It is stored exactly as sent: a value
 * that is not already in that form is refused with a record error saying so, never changed silently
 * (docs/integrations.md, "Code values").
 */
function codeConverter(field: TargetField): Converter {
  const text = textConverter(field);
  const lowerCase = new Violation('is not in capitals (a code is stored as sent, never upper-cased)');
  const spaced = new Violation('has white space at its start or end (a code is stored as sent, never trimmed)');
  return (value) => {
    const s = text(value);
    if (typeof s !== 'string') return s;
    if (hasOuterSpace(s)) return spaced;
    return hasLowerCase(s) ? lowerCase : s;
  };
}

/**
 * Integers are held exactly up to ±(2^53 − 1) (9007199254740991), the range a JavaScript number holds
 * and both databases store: a larger one is refused as sent, never rounded.
 */
function integerConverter(): Converter {
  const notInteger = new Violation('is not an integer');
  const outOfRange = new Violation('is outside the range an integer field holds exactly (-9007199254740991 to 9007199254740991)');
  return (value) => {
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) return value;
      return Number.isInteger(value) ? outOfRange : notInteger;
    }
    let s: string;
    if (typeof value === 'string') s = value;
    else if (value instanceof NumberText) s = value.text;
    else return value === undefined || value === null ? null : notInteger;
    if (s === '') return null;
    if (!INTEGER.test(s)) return notInteger;
    const n = Number(s);
    return Number.isSafeInteger(n) && holdsExactly(s, n) ? n : outOfRange;
  };
}

/**
 * Decimals are held as a double, exactly when the double reads back as the number sent: up to 15
 * significant digits always, up to 17 when the double happens to be that number. Anything else (more
 * digits than that, or beyond ±1.8e308 or nearer zero than 5e-324) is refused as sent, never rounded.
 */
function decimalConverter(): Converter {
  const notDecimal = new Violation('is not a decimal number');
  const inexact = new Violation('is not held exactly by a decimal field (at most 15 significant digits, within ±1.8e308)');
  return (value) => {
    if (typeof value === 'number') return Number.isFinite(value) ? value : inexact;
    let s: string;
    if (typeof value === 'string') s = value;
    else if (value instanceof NumberText) s = value.text;
    else return value === undefined || value === null ? null : notDecimal;
    if (s === '') return null;
    if (!DECIMAL.test(s)) return notDecimal;
    const n = Number(s);
    return holdsExactly(s, n) ? n : inexact;
  };
}

const BOOLEAN_WORDS: ReadonlyMap<string, number> = new Map([
  ['true', 1],
  ['false', 0],
  ['1', 1],
  ['0', 0],
  ['yes', 1],
  ['no', 0],
]);

function booleanConverter(): Converter {
  const notBoolean = new Violation('is not a boolean');
  return (value) => {
    if (value === true || value === 1) return 1;
    if (value === false || value === 0) return 0;
    if (typeof value === 'string') {
      if (value === '') return null;
      return BOOLEAN_WORDS.get(value.toLowerCase()) ?? notBoolean;
    }
    return value === undefined || value === null ? null : notBoolean;
  };
}

function dateConverter(): Converter {
  const notDate = new Violation('is not a date (YYYY-MM-DD)');
  return (value) => {
    if (typeof value === 'string') {
      if (value === '') return null;
      const m = DATE.exec(value);
      return m !== null && isRealDate(Number(m[1]), Number(m[2]), Number(m[3])) ? value : notDate;
    }
    return value === undefined || value === null ? null : notDate;
  };
}

function dateTimeConverter(): Converter {
  const notDateTime = new Violation('is not an ISO 8601 date-time with time zone');
  return (value) => {
    if (typeof value === 'string') {
      if (value === '') return null;
      return parseIsoDateTime(value) ?? notDateTime;
    }
    return value === undefined || value === null ? null : notDateTime;
  };
}

function optionConverter(field: TargetField): Converter {
  const options = field.options ?? [];
  const exact = new Set(options);
  const folded = new Map<string, string>();
  // The first spelling wins if two options differ only in case (the declaration should not allow it).
  for (const o of options) if (!folded.has(o.toLowerCase())) folded.set(o.toLowerCase(), o);
  const notAllowed = new Violation(`is not one of the allowed values: ${options.join(', ')}`);
  return (value) => {
    let s: string;
    if (typeof value === 'string') s = value;
    else if (typeof value === 'number' || typeof value === 'boolean') s = String(value);
    else if (value === undefined || value === null) return null;
    else if (value instanceof NumberText) s = value.text;
    else return notAllowed;
    if (exact.has(s)) return s;
    if (isBlank(s)) return null;
    return folded.get(s.toLowerCase()) ?? notAllowed;
  };
}

function guidConverter(): Converter {
  const notGuid = new Violation('is not a GUID');
  return (value) => {
    if (typeof value === 'string') {
      if (isBlank(value)) return null;
      const m = GUID.exec(value);
      return m === null ? notGuid : (m[1] ?? m[2]!).toLowerCase();
    }
    return value === undefined || value === null ? null : notGuid;
  };
}

export function compileConverter(field: TargetField): Converter {
  switch (field.type) {
    case 'text':
      return textConverter(field);
    case 'code':
      return codeConverter(field);
    case 'integer':
      return integerConverter();
    case 'decimal':
      return decimalConverter();
    case 'boolean':
      return booleanConverter();
    case 'date':
      return dateConverter();
    case 'datetime':
      return dateTimeConverter();
    case 'option':
      return optionConverter(field);
    case 'guid':
      return guidConverter();
    default: {
      const unknown: never = field.type;
      throw new Error(`unknown field type ${String(unknown)}`);
    }
  }
}
