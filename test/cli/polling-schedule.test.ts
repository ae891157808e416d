/**
 * `ifw submit --wait` and `ifw status --wait` poll as the spec advises a caller (§6): the first poll
 * after 5 s, intervals growing 5, 10, 20, 40 s… to a ceiling, a cap on attempts after which the request
 * counts as timed out (exit code 2), transient failures retried, refusals not. The schedule is tested
 * here with an injected clock; the command itself, against real HTTP servers with a short interval, in
 * wait-command.slow.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { scheduleOf } from '../../src/cli/client-wait.js';
import { DEFAULT_SCHEDULE, delayBefore, waitForEnd, type PollAnswer, type PollSchedule } from '../../src/cli/poll.js';

describe('the polling schedule', () => {
  it('follows the spec by default: first poll after 5 s, then 10, 20, 40 s, up to a minute, 60 attempts', () => {
    expect(DEFAULT_SCHEDULE).toEqual({ firstMs: 5_000, maxIntervalMs: 60_000, maxAttempts: 60, timeoutMs: undefined });
    expect([1, 2, 3, 4, 5, 6, 60].map((n) => delayBefore(n, DEFAULT_SCHEDULE))).toEqual([
      5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
    expect(scheduleOf({})).toEqual(DEFAULT_SCHEDULE);
  });

  it.each([
    [{ interval: '0.5' }, { firstMs: 500 }],
    [{ maxInterval: '10' }, { maxIntervalMs: 10_000 }],
    [{ maxAttempts: '3' }, { maxAttempts: 3 }],
    [{ timeout: '90' }, { timeoutMs: 90_000 }],
  ])('takes %j', (flags, expected) => {
    expect(scheduleOf(flags)).toMatchObject(expected);
  });

  it.each([
    [{ interval: '0' }, '--interval must be a number of seconds above 0'],
    [{ interval: 'soon' }, '--interval must be a number of seconds above 0'],
    [{ maxAttempts: '0' }, '--max-attempts must be a whole number from 1'],
    [{ timeout: '-1' }, '--timeout must be a number of seconds above 0'],
  ])('refuses %j', (flags, message) => {
    expect(() => scheduleOf(flags)).toThrow(message);
  });
});

describe('waitForEnd', () => {
  /** Answers in turn; the clock moves only by the sleeps. */
  function scripted(answers: PollAnswer[]) {
    let now = 0;
    const sleeps: number[] = [];
    const said: string[] = [];
    let polls = 0;
    const deps = {
      poll: () => Promise.resolve(answers[Math.min(polls++, answers.length - 1)]!),
      sleep: (ms: number) => {
        sleeps.push(ms);
        now += ms;
        return Promise.resolve();
      },
      now: () => now,
      say: (line: string) => void said.push(line),
    };
    return { deps, sleeps, said, polls: () => polls };
  }
  const schedule: PollSchedule = { firstMs: 5_000, maxIntervalMs: 60_000, maxAttempts: 60, timeoutMs: undefined };
  const pending: PollAnswer = { kind: 'request', status: 'Pending', body: { status: 'Pending' } };
  const processing: PollAnswer = { kind: 'request', status: 'Processing', body: { status: 'Processing' } };
  const completed: PollAnswer = { kind: 'request', status: 'Completed', body: { status: 'Completed' } };

  it('waits 5, 10, 20 s and stops when the request ends', async () => {
    const s = scripted([pending, processing, completed]);
    expect(await waitForEnd(schedule, s.deps)).toEqual({ kind: 'ended', status: 'Completed', body: { status: 'Completed' } });
    expect(s.sleeps).toEqual([5_000, 10_000, 20_000]);
  });

  it('retries a transient failure on the same schedule, saying so, and counts it as an attempt', async () => {
    const s = scripted([{ kind: 'transient', reason: 'the service answered 503' }, completed]);
    expect(await waitForEnd(schedule, s.deps)).toMatchObject({ kind: 'ended', status: 'Completed' });
    expect(s.said).toEqual(['poll 1 failed (the service answered 503); trying again']);
    expect(s.sleeps).toEqual([5_000, 10_000]);
  });

  it('stops at a refusal: asking again would not change it', async () => {
    const s = scripted([{ kind: 'refused', status: 401, body: { error: { code: 'unauthorized' } } }, completed]);
    expect(await waitForEnd(schedule, s.deps)).toEqual({ kind: 'refused', status: 401, body: { error: { code: 'unauthorized' } } });
    expect(s.polls()).toBe(1);
  });

  it('times out after maxAttempts polls with the last status', async () => {
    const s = scripted([pending, processing]);
    expect(await waitForEnd({ ...schedule, maxAttempts: 4 }, s.deps)).toEqual({
      kind: 'timedOut',
      attempts: 4,
      waitedMs: 5_000 + 10_000 + 20_000 + 40_000,
      last: { status: 'Processing' },
    });
  });

  it('times out before a wait that would pass the timeout', async () => {
    const s = scripted([pending]);
    expect(await waitForEnd({ ...schedule, timeoutMs: 30_000 }, s.deps)).toMatchObject({ kind: 'timedOut', attempts: 2, waitedMs: 15_000 });
  });

  it('warns once when the first interval is shorter than the spec advises (5 s), and not at 5 s or more', async () => {
    const short = scripted([completed]);
    await waitForEnd({ ...schedule, firstMs: 2_000 }, short.deps);
    expect(short.said).toEqual([
      'polling every 2 s at first: the spec advises at least 5 to 10 seconds between polls (--interval 5 or more)',
    ]);
    const advised = scripted([pending, completed]);
    await waitForEnd(schedule, advised.deps);
    await waitForEnd({ ...schedule, firstMs: 10_000 }, advised.deps);
    expect(advised.said).toEqual([]);
  });

  it('polls at once first when asked (resuming a wait), then follows the schedule', async () => {
    const s = scripted([pending, completed]);
    await waitForEnd(schedule, s.deps, { pollAtOnce: true });
    expect(s.sleeps).toEqual([0, 5_000]);
  });
});
