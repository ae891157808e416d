/**
 * Waiting for real concurrency (a worker thread, another process, a server) by what it does, never by
 * the clock: `until` polls a condition until it holds. The timeout is generous, only there to turn a
 * hang into a failure that says what was waited for and what was seen last.
 */

export interface UntilOptions {
  /** What is waited for, in the failure message (e.g. "request 42 Completed"). */
  readonly what?: string;
  /** How long to poll before failing; default 20 s (below the tests' 30 s timeout, so this message is the one seen). */
  readonly timeoutMs?: number;
  /** Pause between two polls; default 10 ms. */
  readonly intervalMs?: number;
}

export interface UntilValueOptions<T> extends UntilOptions {
  /** When the value answered holds; without it, any value but undefined, null and false holds. */
  readonly holds: (value: T) => boolean;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_INTERVAL_MS = 10;

function shown(seen: { value: unknown } | { error: unknown } | undefined): string {
  if (seen === undefined) return 'nothing (the condition never answered)';
  if ('error' in seen) return `the error ${seen.error instanceof Error ? (seen.error.stack ?? seen.error.message) : String(seen.error)}`;
  try {
    return JSON.stringify(seen.value) ?? String(seen.value);
  } catch {
    return String(seen.value);
  }
}

/**
 * Polls `condition` until it holds and answers the value that held: any value but undefined, null or
 * false, or, given `holds`, a value `holds` accepts. A condition that throws has not held yet (a
 * process still starting, a row not yet there); its error is reported if nothing holds in time.
 */
export function until<T>(condition: () => T | Promise<T>, options: UntilValueOptions<T>): Promise<T>;
export function until<T>(
  condition: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options?: UntilOptions,
): Promise<T>;
export async function until<T>(condition: () => T | Promise<T>, options: Partial<UntilValueOptions<T>> = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const holds = options.holds ?? ((value: T) => value !== undefined && value !== null && value !== false);
  const deadline = Date.now() + timeoutMs;
  let seen: { value: unknown } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await condition();
      if (holds(value)) return value;
      seen = { value };
    } catch (error) {
      seen = { error };
    }
    if (Date.now() > deadline) {
      throw new Error(`${options.what ?? 'the condition'} did not hold within ${timeoutMs} ms; last seen: ${shown(seen)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? DEFAULT_INTERVAL_MS));
  }
}
