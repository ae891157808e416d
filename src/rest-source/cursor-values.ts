/**
 * The cursor field bookmark of an incremental endpoint (pure): which record field it follows, how its
 * values are read and compared (date-times as instants, numbers as numbers), the lookback subtracted
 * before it is sent, and the value a run would send. The bookmark itself is stored on the endpoint
 * (`cursor_value`, migration 018) and moved only by the transaction that completes a run
 * (src/import-runs/complete-run.ts), or by an administrator (src/rest-source/cursor-service.ts).
 */
export const CURSOR_FIELD_TYPES = ['dateTime', 'number'] as const;
export type CursorFieldType = (typeof CURSOR_FIELD_TYPES)[number];

/** The incremental settings of an endpoint, as stored (the `incremental` column) and validated. */
export interface IncrementalSettings {
  /** The record field the bookmark follows: a property name, dot path or JSONPath, as a records path. */
  readonly cursorField: string;
  readonly cursorFieldType: CursorFieldType;
  /** Sent by `{{cursor}}` while there is no bookmark; null: the type's default (DEFAULT_INITIAL). */
  readonly cursorFieldInitialValue: string | null;
  /** Subtracted from the bookmark before it is sent: a duration (dateTime) or a number (number); null: none. */
  readonly cursorFieldLookback: string | null;
}

/** What `{{cursor}}` sends on the first run when no initial value is set. */
export const DEFAULT_INITIAL: Readonly<Record<CursorFieldType, string>> = { dateTime: '1970-01-01T00:00:00Z', number: '0' };

/** The bookmark and the last successful run, as stored on the endpoint. */
export interface EndpointBookmark {
  /** The highest cursor field value the last committed runs imported (normalised); null: none yet. */
  readonly cursorValue: string | null;
  /** When the bookmark last changed (a run, a set or a reset); null: never. */
  readonly cursorUpdatedAt: string | null;
  /** When the endpoint's last Completed run started; null: none yet. */
  readonly lastSuccessfulRunStartedAt: string | null;
}

export const NO_BOOKMARK: EndpointBookmark = { cursorValue: null, cursorUpdatedAt: null, lastSuccessfulRunStartedAt: null };

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|z|[+-]\d{2}:?\d{2})?)?$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/** A date-time as an instant (ms since the epoch): ISO 8601 / RFC 3339, a date alone is midnight UTC, no zone is UTC. */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text.trim());
  if (m === null) return null;
  const [, date, time, zone] = m;
  let iso = time === undefined ? `${date}T00:00:00Z` : `${date}T${time}${zone ?? 'Z'}`;
  if (zone !== undefined && /^[+-]\d{4}$/.test(zone)) iso = iso.slice(0, -2) + ':' + iso.slice(-2);
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/** An instant as ISO 8601 in UTC, milliseconds only when there are some: `2026-11-26T10:00:00Z`. */
export const isoOf = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * A value of the cursor field as the bookmark stores it: a date-time as ISO 8601 UTC, a number as its
 * decimal text; or the problem when the value cannot be one.
 */
export function cursorValueOf(value: unknown, type: CursorFieldType): { readonly value: string } | { readonly problem: string } {
  if (type === 'dateTime') {
    const ms = typeof value === 'string' ? parseDateTime(value) : null;
    return ms === null
      ? { problem: `${JSON.stringify(value)} is not a date-time (ISO 8601, e.g. 2026-11-26T10:00:00Z)` }
      : { value: isoOf(ms) };
  }
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value.trim() : '';
  return NUMBER.test(text) ? { value: text.replace(/^(-?)0+(?=\d)/, '$1') } : { problem: `${JSON.stringify(value)} is not a number` };
}

/** Compares two normalised values of one type: negative, zero or positive. */
export function compareCursorValues(a: string, b: string, type: CursorFieldType): number {
  if (type === 'dateTime') return parseDateTime(a)! - parseDateTime(b)!;
  if (!a.includes('.') && !b.includes('.')) {
    const [x, y] = [BigInt(a), BigInt(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return Number(a) - Number(b);
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const SHORT_DURATION = /^(\d{1,9})\s*(s|m|h|d)$/;
const ISO_DURATION = /^P(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?$/i;

/** A lookback duration in ms: `30s`, `15m`, `2h`, `1d`, or ISO 8601 `PT15M`, `P1DT2H`; null when it is not one. */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  const short = SHORT_DURATION.exec(t);
  if (short !== null) return Number(short[1]) * UNIT_MS[short[2]!]!;
  const iso = ISO_DURATION.exec(t);
  if (iso === null || t.length <= 2 || /T$/i.test(t)) return null;
  const [, d, h, m, s] = iso.map((x) => Number(x ?? 0));
  return ((d! * 24 + h!) * 60 + m!) * 60_000 + s! * 1000;
}

/** The bookmark minus the lookback: what `{{cursor}}` sends (initial value while there is no bookmark). */
export function cursorToSend(settings: IncrementalSettings, bookmark: string | null): string {
  if (bookmark === null) return settings.cursorFieldInitialValue ?? DEFAULT_INITIAL[settings.cursorFieldType];
  const lookback = settings.cursorFieldLookback;
  if (lookback === null) return bookmark;
  if (settings.cursorFieldType === 'dateTime') return isoOf(parseDateTime(bookmark)! - parseDuration(lookback)!);
  if (!bookmark.includes('.') && !lookback.includes('.')) return String(BigInt(bookmark) - BigInt(lookback));
  return String(Number(bookmark) - Number(lookback));
}
