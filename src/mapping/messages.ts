/**
 * The words an import uses to explain itself. The request's `errorMessage` is what a submitter reads
 * to fix the data, so its shape is fixed here and tested to the character:
 *   record 3: field "email" value "averyveryverylong…" exceeds 80 characters
 *   record 3: field "name" is required
 *   payload is not valid JSON: Unexpected token …
 */
import { NumberText } from '../core/exact-json.js';

export interface RecordError {
  /** 1-based record number; null for a payload-level error. */
  readonly recordNo: number | null;
  /** Target field name; null when the error is about the whole record or payload. */
  readonly field: string | null;
  /** JSON of the offending value, shortened to 60 characters plus '…'; null when there is no value to show. */
  readonly value: string | null;
  /** The rule broken, e.g. `is required`, `exceeds 80 characters`. */
  readonly rule: string;
  readonly message: string;
}

export const MAX_VALUE_CHARS = 60;
/** How many messages `errorMessage` spells out before summarising the rest. */
export const MESSAGES_SHOWN = 3;

/**
 * JSON of a value for a message. A long string is cut inside its quotes (so the message still reads
 * `"abc…"`); anything else is cut after serialising.
 */
export function describeValue(value: unknown): string {
  // A number is shown as sent: its text when a double would not hold it, Infinity and NaN by name.
  if (value instanceof NumberText) return cut(value.text);
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'string') {
    return JSON.stringify(value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value);
  }
  let json: string;
  try {
    json = JSON.stringify(value) ?? String(value);
  } catch {
    // Nested deeper than the stack allows (a remote API's record can be): described, not serialised.
    return Array.isArray(value) ? '[…]' : '{…}';
  }
  return cut(json);
}

const cut = (text: string): string => (text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text);

export function recordError(recordNo: number, field: string | null, value: string | null, rule: string): RecordError {
  let message = `record ${recordNo}: `;
  if (field !== null) message += `field "${field}" `;
  if (value !== null) message += `value ${value} `;
  return { recordNo, field, value, rule, message: message + rule };
}

/** An error about the payload or the integration as a whole: its message stands alone. */
export function payloadError(rule: string, message: string, field: string | null = null): RecordError {
  return { recordNo: null, field, value: null, rule, message };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The first three messages, then `… and N more errors` when there were more (counting those not kept). */
export function formatErrorMessage(errors: readonly RecordError[], totalErrorCount: number): string {
  const shown = errors.slice(0, MESSAGES_SHOWN).map((e) => e.message);
  let text = shown.join('; ');
  const more = totalErrorCount - shown.length;
  if (totalErrorCount > MESSAGES_SHOWN && more > 0) text += `; … and ${more} more ${more === 1 ? 'error' : 'errors'}`;
  return text;
}

/** `errorMessage` of an import that committed but left records out. */
export function formatSkippedMessage(skipped: number, errors: readonly RecordError[], totalErrorCount: number): string {
  return `${plural(skipped, 'record')} skipped: ${formatErrorMessage(errors, totalErrorCount)}`;
}
