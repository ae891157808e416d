/**
 * `--wait` of the client commands: the flags of the polling schedule and the wait itself, which polls
 * the request until it ends, as the spec advises a caller (poll.ts), prints it and sets the exit code.
 */
import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../core/config.js';
import { API, http, Unreachable, type Answer } from './client-http.js';
import { EXIT_TIMED_OUT, print, say } from './client-output.js';
import { DEFAULT_SCHEDULE, waitForEnd, type PollAnswer, type PollSchedule } from './poll.js';

export interface WaitFlags {
  wait?: boolean;
  interval?: string;
  maxInterval?: string;
  maxAttempts?: string;
  timeout?: string;
}

function seconds(value: string | undefined, name: string, fallbackMs: number | undefined): number | undefined {
  if (value === undefined) return fallbackMs;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 86_400) {
    throw new ConfigError(`${name} must be a number of seconds above 0 and at most 86400 (decimals allowed), got "${value}"`);
  }
  return Math.round(n * 1000);
}

export function scheduleOf(flags: WaitFlags): PollSchedule {
  const firstMs = seconds(flags.interval, '--interval', DEFAULT_SCHEDULE.firstMs)!;
  const maxIntervalMs = seconds(flags.maxInterval, '--max-interval', DEFAULT_SCHEDULE.maxIntervalMs)!;
  let maxAttempts = DEFAULT_SCHEDULE.maxAttempts;
  if (flags.maxAttempts !== undefined) {
    if (!/^\d{1,6}$/.test(flags.maxAttempts) || Number(flags.maxAttempts) < 1) {
      throw new ConfigError(`--max-attempts must be a whole number from 1, got "${flags.maxAttempts}"`);
    }
    maxAttempts = Number(flags.maxAttempts);
  }
  return { firstMs, maxIntervalMs, maxAttempts, timeoutMs: seconds(flags.timeout, '--timeout', undefined) };
}

export const withWaitOptions = (cmd: Command): Command =>
  cmd
    .option('--wait', 'poll until the request is Completed, Failed or Cancelled (exit code 2 if it has not ended when the wait runs out)')
    .option(
      '--interval <seconds>',
      'first wait and first interval between polls; it doubles after each poll (default 5, as the spec advises)',
    )
    .option('--max-interval <seconds>', 'longest interval between polls (default 60)')
    .option('--max-attempts <n>', 'polls before giving up (default 60: about an hour with the default intervals)')
    .option('--timeout <seconds>', 'give up after this long, whatever the attempts left');

function pollOnce(url: string): () => Promise<PollAnswer> {
  return async () => {
    let answer: Answer;
    try {
      answer = await http('GET', url);
    } catch (err) {
      if (err instanceof Unreachable) return { kind: 'transient', reason: err.message };
      throw err;
    }
    if (answer.status === 200) return { kind: 'request', status: String((answer.json as { status?: unknown }).status), body: answer.json };
    if (answer.status === 429 || answer.status >= 500) return { kind: 'transient', reason: `the service answered ${answer.status}` };
    return { kind: 'refused', status: answer.status, body: answer.json };
  };
}

/** Polls until the request ends and sets the exit code. */
export async function waitAndReport(base: string, requestId: string, flags: WaitFlags, pollAtOnce: boolean): Promise<void> {
  const schedule = scheduleOf(flags);
  const deps = {
    poll: pollOnce(`${base}${API}/bulkImportRequests(${requestId})`),
    sleep: (ms: number) => sleep(ms),
    now: () => Date.now(),
    say,
  };
  const outcome = await waitForEnd(schedule, deps, { pollAtOnce });
  switch (outcome.kind) {
    case 'ended':
      print(outcome.body);
      if (outcome.status !== 'Completed') process.exitCode = 1;
      return;
    case 'refused':
      print(outcome.body);
      process.exitCode = 1;
      return;
    case 'timedOut': {
      if (outcome.last !== undefined) print(outcome.last);
      const waited = Math.round(outcome.waitedMs / 1000);
      say(`request ${requestId} has not ended after ${outcome.attempts} polls (${waited} s); resume with: ifw status ${requestId} --wait`);
      process.exitCode = EXIT_TIMED_OUT;
      return;
    }
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}
