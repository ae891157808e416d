/**
 * Polling a bulk import request until it ends, as the spec's guidance (§6) asks of a caller: wait at
 * least 5 seconds before the first poll, increase the interval progressively (5, 10, 20, 40 s…, up to a
 * ceiling), cap the number of attempts and then treat the request as timed out. A poll that fails for
 * a reason that passes (the network, 5xx, 429) is retried on the same schedule; a refusal (401, 403,
 * 404) is not: it does not go away by asking again.
 *
 * Pure schedule, injected I/O: `waitForEnd` is given the poll, a sleep and a clock.
 */

export interface PollSchedule {
  /** Before the first poll, and the first interval. */
  readonly firstMs: number;
  /** The interval doubles after each poll up to this. */
  readonly maxIntervalMs: number;
  /** Polls at most; then the request counts as timed out. */
  readonly maxAttempts: number;
  /** Overall limit from the start of waiting; undefined: none beyond maxAttempts. */
  readonly timeoutMs: number | undefined;
}

/** The spec's guidance: 5 s, doubling to at most a minute, 60 attempts (about an hour). */
export const DEFAULT_SCHEDULE: PollSchedule = { firstMs: 5_000, maxIntervalMs: 60_000, maxAttempts: 60, timeoutMs: undefined };

/** The spec's guidance (§6): at least 5 to 10 seconds between polls; a shorter first interval is warned about. */
export const SPEC_MIN_INTERVAL_MS = 5_000;

/** The warning for an interval shorter than the spec advises (undefined: none). */
export const intervalWarning = (schedule: PollSchedule): string | undefined =>
  schedule.firstMs >= SPEC_MIN_INTERVAL_MS
    ? undefined
    : `polling every ${schedule.firstMs / 1000} s at first: the spec advises at least 5 to 10 seconds between polls (--interval 5 or more)`;

/** The wait before poll number `attempt` (1-based). */
export const delayBefore = (attempt: number, schedule: PollSchedule): number =>
  Math.min(schedule.firstMs * 2 ** (attempt - 1), Math.max(schedule.maxIntervalMs, schedule.firstMs));

export type PollAnswer =
  /** The service answered 200 with the request. */
  | { readonly kind: 'request'; readonly status: string; readonly body: unknown }
  /** A refusal that asking again will not change (a 4xx other than 429). */
  | { readonly kind: 'refused'; readonly status: number; readonly body: unknown }
  /** It may pass: the network, a 5xx, a 429. */
  | { readonly kind: 'transient'; readonly reason: string };

export type WaitOutcome =
  | { readonly kind: 'ended'; readonly status: string; readonly body: unknown }
  | { readonly kind: 'refused'; readonly status: number; readonly body: unknown }
  /** The cap was reached with the request still Pending or Processing (or not answering). */
  | { readonly kind: 'timedOut'; readonly attempts: number; readonly waitedMs: number; readonly last: unknown };

export interface WaitOptions {
  /** Poll once at once, before the schedule starts (resuming a wait on a request that may have ended). */
  readonly pollAtOnce?: boolean;
}

export interface WaitDeps {
  readonly poll: () => Promise<PollAnswer>;
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
  /** Progress for a person (stderr). */
  readonly say: (line: string) => void;
}

const ENDED = new Set(['Completed', 'Failed', 'Cancelled']);

export async function waitForEnd(schedule: PollSchedule, deps: WaitDeps, options: WaitOptions = {}): Promise<WaitOutcome> {
  const warning = intervalWarning(schedule);
  if (warning !== undefined) deps.say(warning);
  const started = deps.now();
  let last: unknown;
  let attempts = 0;
  let waits = 0;
  while (attempts < schedule.maxAttempts) {
    const delay = attempts === 0 && options.pollAtOnce === true ? 0 : delayBefore(++waits, schedule);
    if (schedule.timeoutMs !== undefined && deps.now() - started + delay > schedule.timeoutMs) break;
    await deps.sleep(delay);
    attempts += 1;
    const answer = await deps.poll();
    switch (answer.kind) {
      case 'request':
        last = answer.body;
        if (ENDED.has(answer.status)) return { kind: 'ended', status: answer.status, body: answer.body };
        break;
      case 'refused':
        return answer;
      case 'transient':
        deps.say(`poll ${attempts} failed (${answer.reason}); trying again`);
        break;
      default: {
        const never: never = answer;
        throw new Error(`unknown poll answer ${JSON.stringify(never)}`);
      }
    }
  }
  return { kind: 'timedOut', attempts, waitedMs: deps.now() - started, last };
}
