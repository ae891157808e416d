/**
 * Outbound HTTP for REST imports: one request with timeouts, a retry loop for what is worth retrying
 * (429, 5xx, network errors and timeouts) with capped exponential backoff and jitter honouring
 * Retry-After, and FetchError, the one error a fetch throws for a remote problem. Time, sleep and
 * randomness are parameters so that tests never wait for a backoff.
 */
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import type { HttpMethod, RetryPolicy } from './model.js';
import {
  addressRules,
  checkedLookup,
  literalAddress,
  DEFAULT_OUTBOUND_POLICY,
  OutboundRefused,
  type AddressRules,
  type OutboundPolicy,
} from './outbound-policy.js';

/** A page (or probe) that could not be fetched; `message` is the whole sentence a run log shows. */
export class FetchError extends Error {
  constructor(
    /** 1-based page number the failure belongs to. */
    readonly pageNo: number,
    /** The URL concerned, secrets redacted. */
    readonly url: string,
    message: string,
    /** The HTTP status of the last answer, null when there was none. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

/** Exponential backoff never waits longer than this between two attempts. */
export const MAX_BACKOFF_MS = 30_000;
/** A Retry-After longer than this is shortened to it: an import should fail within minutes, not hang for hours. */
export const MAX_RETRY_AFTER_MS = 120_000;
/** The most of a response body an error message quotes. */
export const EXCERPT_CHARS = 500;

/** Retry-After in ms from now: delta-seconds or an HTTP date (RFC 9110 10.2.3); null when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: Date): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // Every HTTP-date form names the month; without that check V8 reads "-5" or "1.5" as dates.
  if (!/[a-z]{3}/i.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/**
 * Delay before retry number `attempt` (1 = the first retry). Retry-After wins when the server sent a
 * readable one (capped at MAX_RETRY_AFTER_MS); otherwise initialDelayMs doubles per retry up to
 * MAX_BACKOFF_MS, and "equal jitter" picks a delay between half of that and all of it, so that many
 * runs failing together do not retry together, yet each waits a predictable minimum.
 * `random` is a number in [0, 1).
 */
export function computeBackoff(attempt: number, policy: RetryPolicy, retryAfterHeader: string | null, now: Date, random: number): number {
  const retryAfter = parseRetryAfter(retryAfterHeader, now);
  if (retryAfter !== null) return Math.min(retryAfter, MAX_RETRY_AFTER_MS);
  const exponential = Math.min(MAX_BACKOFF_MS, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + (random * exponential) / 2);
}

export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500;

export const statusLine = (status: number): string => `${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;

/** The first EXCERPT_CHARS characters of a body, on one line, for an error message. */
export function excerpt(text: string, max: number = EXCERPT_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Which addresses a fetch may connect to (outbound-policy.ts). */
export interface OutboundGuard {
  readonly rules: AddressRules;
  /** Origins an administrator chose (the connection's base URL and token URL): only the deny list applies there. */
  readonly chosenOrigins: ReadonlySet<string>;
}

/**
 * A keep-alive agent whose connect, header and body timeouts are the connection's timeout, and whose
 * connect step checks the address it connects to against the guard (a literal IP as written, a name
 * as resolved, in the same lookup that connects).
 */
export function createAgent(timeoutMs: number, guard?: OutboundGuard): Agent {
  const timeouts = { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 10_000 };
  if (guard === undefined) return new Agent({ connect: { timeout: timeoutMs }, ...timeouts });
  const chosen = buildConnector({ timeout: timeoutMs, lookup: checkedLookup(guard.rules.chosen) });
  const other = buildConnector({ timeout: timeoutMs, lookup: checkedLookup(guard.rules.other) });
  const connect: buildConnector.connector = (options, callback) => {
    const isChosen = guard.chosenOrigins.has(`${options.protocol}//${options.host}`);
    const literal = literalAddress(options.hostname);
    const why = literal === null ? null : (isChosen ? guard.rules.chosen : guard.rules.other)(literal);
    if (why !== null) return callback(new OutboundRefused(why), null);
    return (isChosen ? chosen : other)(options, callback);
  };
  return new Agent({ connect, ...timeouts });
}

/** What the HTTP layer needs from outside; everything has a production default (see httpDeps). */
export interface HttpOptions {
  /** Where requests go; default: a keep-alive Agent created per fetch (guarded by `outbound`) and closed after it. */
  readonly dispatcher?: Dispatcher;
  /** The addresses requests may reach; default: no deny list, no allow list (outbound-policy.ts). */
  readonly outbound?: OutboundPolicy;
  /** Waits between retries; tests pass one that records the delay and returns at once. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly clock?: Clock;
  /** A number in [0, 1) per call: the backoff jitter. */
  readonly random?: () => number;
  /** Cancels the fetch between and during requests. */
  readonly signal?: AbortSignal;
  /** Told before each retry, with the status that caused it (`network` when there was no answer). */
  readonly onRetry?: (status: string) => void;
}

export interface HttpDeps {
  readonly dispatcher: Dispatcher;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly clock: Clock;
  readonly random: () => number;
  readonly signal: AbortSignal | undefined;
  readonly onRetry?: ((status: string) => void) | undefined;
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal === undefined ? {} : { signal });

/**
 * Runs `use` with complete dependencies; an Agent created here (no dispatcher given) is closed after
 * `use` settles, so that sockets do not outlive the fetch.
 */
export async function withHttp<T>(
  timeoutMs: number,
  options: HttpOptions,
  use: (deps: HttpDeps) => Promise<T>,
  chosenOrigins: ReadonlySet<string> = new Set(),
): Promise<T> {
  const guard = { rules: addressRules(options.outbound ?? DEFAULT_OUTBOUND_POLICY), chosenOrigins };
  const owned = options.dispatcher === undefined ? createAgent(timeoutMs, guard) : null;
  const deps: HttpDeps = {
    dispatcher: options.dispatcher ?? owned!,
    sleep: options.sleep ?? defaultSleep,
    clock: options.clock ?? (() => new Date()),
    random: options.random ?? Math.random,
    signal: options.signal,
    onRetry: options.onRetry,
  };
  try {
    return await use(deps);
  } finally {
    if (owned !== null) await owned.close();
  }
}

export interface HttpRequest {
  readonly method: HttpMethod;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
  readonly timeoutMs: number;
}

export type HttpOutcome =
  /** `text`: the whole body for 2xx, otherwise its beginning (enough for an excerpt). */
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: IncomingHttpHeaders;
      readonly text: string;
      readonly attempts: number;
    }
  | { readonly kind: 'noAnswer'; readonly reason: string; readonly attempts: number };

export function headerValue(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** Bytes of an error body worth reading: the excerpt needs far less, and the rest is discarded. */
const ERROR_BODY_BYTES = 8 * 1024;

async function readErrorBody(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= ERROR_BODY_BYTES) break; // leaving the loop destroys the stream
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeNetworkError(err: unknown, timeoutMs: number): { reason: string; retryable: boolean } {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return { reason: `no response within ${timeoutMs} ms (timeout)`, retryable: true };
    case 'UND_ERR_BODY_TIMEOUT':
      return { reason: `the response body stalled for more than ${timeoutMs} ms (timeout)`, retryable: true };
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { reason: `could not connect within ${timeoutMs} ms (timeout)`, retryable: true };
    case 'IFW_OUTBOUND_REFUSED':
      return { reason: `not connected: ${err instanceof Error ? err.message : String(err)}`, retryable: false };
    case 'UND_ERR_INVALID_ARG':
    case 'ERR_INVALID_URL':
      return { reason: `the request is invalid: ${err instanceof Error ? err.message : String(err)}`, retryable: false };
    default: {
      const message = err instanceof Error ? err.message : String(err);
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      return { reason: `network error: ${message}${cause}${code !== '' && !message.includes(code) ? ` (${code})` : ''}`, retryable: true };
    }
  }
}

type Attempt =
  | { readonly kind: 'answer'; readonly status: number; readonly headers: IncomingHttpHeaders; readonly text: string }
  | { readonly kind: 'noAnswer'; readonly reason: string; readonly retryable: boolean };

async function sendOnce(req: HttpRequest, deps: HttpDeps): Promise<Attempt> {
  try {
    const response = await request(req.url, {
      dispatcher: deps.dispatcher,
      method: req.method,
      headers: req.headers,
      body: req.body,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
      signal: deps.signal ?? null,
    });
    const { statusCode: status, headers } = response;
    const text = status >= 200 && status < 300 ? await response.body.text() : await readErrorBody(response.body);
    return { kind: 'answer', status, headers, text };
  } catch (err) {
    if (deps.signal?.aborted === true) throw deps.signal.reason;
    return { kind: 'noAnswer', ...describeNetworkError(err, req.timeoutMs) };
  }
}

/**
 * Sends `req`, retrying 429, 5xx and network failures up to policy.maxRetries times. Returns the last
 * outcome: a 2xx, an answer not worth retrying, or the last retryable failure once retries ran out.
 * Throws only when the signal aborts.
 */
export async function exchange(req: HttpRequest, policy: RetryPolicy, deps: HttpDeps): Promise<HttpOutcome> {
  for (let attempts = 1; ; attempts++) {
    const outcome = await sendOnce(req, deps);
    const retryable = outcome.kind === 'answer' ? isRetryableStatus(outcome.status) : outcome.retryable;
    if (!retryable || attempts > policy.maxRetries) {
      return outcome.kind === 'answer'
        ? { kind: 'answer', status: outcome.status, headers: outcome.headers, text: outcome.text, attempts }
        : { kind: 'noAnswer', reason: outcome.reason, attempts };
    }
    deps.onRetry?.(outcome.kind === 'answer' ? String(outcome.status) : 'network');
    const retryAfter = outcome.kind === 'answer' ? headerValue(outcome.headers, 'retry-after') : null;
    await deps.sleep(computeBackoff(attempts, policy, retryAfter, deps.clock(), deps.random()), deps.signal);
  }
}

/** "after 4 attempts" when retries happened, for messages about the last outcome. */
export const afterAttempts = (attempts: number): string => (attempts > 1 ? ` after ${attempts} attempts` : '');

/** Why an answer is not a usable page, with a hint where the status says what to check. */
export function describeAnswer(status: number, text: string, attempts: number): string {
  const hint =
    status === 401 || status === 403
      ? ': check the credentials'
      : status === 404
        ? ': check the base URL and the endpoint path'
        : status >= 300 && status < 400
          ? ': redirects are not followed; use the final URL'
          : '';
  const body = excerpt(text);
  return `the service answered ${statusLine(status)}${afterAttempts(attempts)}${hint}${body === '' ? '' : `: ${body}`}`;
}
