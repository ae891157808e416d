/**
 * `ifw submit --wait` and `ifw status --wait` poll as the spec advises a caller (§6): the first poll
 * after 5 s, intervals growing 5, 10, 20, 40 s… to a ceiling, a cap on attempts after which the request
 * counts as timed out (exit code 2), transient failures retried, refusals not. The schedule is tested
 * with an injected clock; the command against real HTTP servers with a short interval.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_TIMED_OUT, scheduleOf } from '../../src/cli/client-commands.js';
import { DEFAULT_SCHEDULE, delayBefore, waitForEnd, type PollAnswer, type PollSchedule } from '../../src/cli/poll.js';
import { assertBuilt, ROOT, runIfw } from '../helpers/process.js';

const PAYLOAD_FILE = path.join(ROOT, 'examples/customers-payload.json');
const REQUEST_ID = '0190a000-0000-7000-8000-000000000001';

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

  it('polls at once first when asked (resuming a wait), then follows the schedule', async () => {
    const s = scripted([pending, completed]);
    await waitForEnd(schedule, s.deps, { pollAtOnce: true });
    expect(s.sleeps).toEqual([0, 5_000]);
  });
});

describe('ifw submit --wait and ifw status --wait against a service', () => {
  let server: Server | undefined;
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  /** A service that accepts a submission and answers each poll with the next of `polls` (the last repeats). */
  async function fakeService(polls: ((res: ServerResponse, req: IncomingMessage) => void)[]): Promise<{ url: string; gets: () => number }> {
    let gets = 0;
    server = createServer((req, res) => {
      req.resume();
      if (req.method === 'POST') {
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ requestId: REQUEST_ID, status: 'Pending' }));
        return;
      }
      polls[Math.min(gets++, polls.length - 1)]!(res, req);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, gets: () => gets };
  }
  const json = (status: number, body: unknown) => (res: ServerResponse) =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const request = (status: string) => json(200, { requestId: REQUEST_ID, status, recordCount: 0, errorMessage: '' });

  it('says the request id on stderr at once, survives a dropped connection and a 503, and prints the ended request', async () => {
    const service = await fakeService([
      (_res, req) => req.socket.destroy(),
      json(503, { error: { code: 'serviceUnavailable', message: 'The database is busy; try again shortly.' } }),
      request('Processing'),
      request('Completed'),
    ]);
    const result = await runIfw(['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', service.url, '--wait', '--interval', '0.05'], {});
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`ifw: request ${REQUEST_ID} accepted; follow it with: ifw status ${REQUEST_ID}`);
    expect(result.stderr).toMatch(/poll 1 failed \(cannot reach the service .*\); trying again/);
    expect(result.stderr).toContain('poll 2 failed (the service answered 503); trying again');
    expect(result.stdout).toContain('"status": "Completed"');
    expect(service.gets()).toBe(4);
  });

  it('exits 2, printing the last status and how to resume, when the request has not ended within the attempts', async () => {
    const service = await fakeService([request('Processing')]);
    const result = await runIfw(['status', REQUEST_ID, '--url', service.url, '--wait', '--interval', '0.05', '--max-attempts', '3'], {});
    expect(result.code).toBe(EXIT_TIMED_OUT);
    expect(JSON.parse(result.stdout)).toMatchObject({ requestId: REQUEST_ID, status: 'Processing' });
    expect(result.stderr).toContain(`request ${REQUEST_ID} has not ended after 3 polls`);
    expect(result.stderr).toContain(`resume with: ifw status ${REQUEST_ID} --wait`);
    expect(service.gets()).toBe(3);
  });

  it('exits 1 for a Failed request', async () => {
    const service = await fakeService([request('Failed')]);
    const result = await runIfw(['status', REQUEST_ID, '--url', service.url, '--wait', '--interval', '0.05'], {});
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'Failed' });
  });

  it('refuses a wait option it cannot use before submitting anything', async () => {
    const service = await fakeService([request('Completed')]);
    const result = await runIfw(['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', service.url, '--wait', '--interval', 'soon'], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--interval must be a number of seconds above 0');
    expect(service.gets()).toBe(0);
  });
});
