/**
 * `ifw submit`, `ifw status` and `ifw requests …`: a client of a running service over HTTP. With `--wait` they poll the
 * request until it ends, as the spec advises a caller (poll.ts). The request id goes to stderr the
 * moment it is known, so a caller that stops waiting can resume with `ifw status <id> --wait`.
 *
 * Exit codes: 0 the request Completed (or, without --wait, was accepted / answered); 1 it Failed or was
 * Cancelled, or the service refused or could not be reached; 2 it did not end within the wait
 * (still Pending or Processing: resume later).
 */
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '../core/config.js';
import { DEFAULT_SCHEDULE, waitForEnd, type PollAnswer, type PollSchedule } from './poll.js';

const API = '/api/vendor/integrationFramework/v1.0';

/** Exit code of a wait that reached its cap with the request still Pending or Processing. */
export const EXIT_TIMED_OUT = 2;

function baseUrl(flag: string | undefined): string {
  if (flag !== undefined) return flag.replace(/\/$/, '');
  if (process.env.IFW_URL) return process.env.IFW_URL.replace(/\/$/, '');
  const config = loadConfig();
  return `http://${config.host}:${config.port}`;
}

/** Credentials for client commands: IFW_TOKEN (a bearer token), or IFW_USER and IFW_PASSWORD (Basic). */
function authorization(): Record<string, string> {
  const { IFW_TOKEN: token, IFW_USER: user, IFW_PASSWORD: password } = process.env;
  if (token !== undefined && token !== '') return { authorization: `Bearer ${token}` };
  if (user !== undefined && user !== '') return { authorization: `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}` };
  return {};
}

interface Answer {
  readonly status: number;
  readonly json: unknown;
}

class Unreachable extends Error {}

async function http(method: string, url: string, body?: unknown): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { ...authorization(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new Unreachable(`cannot reach the service at ${new URL(url).origin} (${cause}); is it running? (--url or IFW_URL)`);
  }
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, json };
}

const print = (value: unknown): void => console.log(JSON.stringify(value, null, 2));
const say = (line: string): void => void process.stderr.write(`ifw: ${line}\n`);

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

const withWaitOptions = (cmd: Command): Command =>
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
async function waitAndReport(base: string, requestId: string, flags: WaitFlags, pollAtOnce: boolean): Promise<void> {
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

/** Unreachable while submitting is a refusal to run the command (exit 1), as before polling began. */
async function reach(method: string, url: string, body?: unknown): Promise<Answer> {
  try {
    return await http(method, url, body);
  } catch (err) {
    if (err instanceof Unreachable) throw new ConfigError(err.message);
    throw err;
  }
}

export function addClientCommands(program: Command): void {
  withWaitOptions(
    program
      .command('submit')
      .description('submit a payload to a running service (POST bulkImportRequests)')
      .requiredOption('-i, --integration <sortingOrder>', 'integration Sorting Order')
      .requiredOption('-f, --file <file>', 'file holding the JSON payload')
      .option('--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)')
      .addHelpText('after', '\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).'),
  ).action(async (flags: WaitFlags & { integration: string; file: string; url?: string }) => {
    const base = baseUrl(flags.url);
    // Checked before submitting: a typo in a wait option must not leave an accepted request behind.
    if (flags.wait === true) scheduleOf(flags);
    const payload = await readFile(flags.file, 'utf8');
    const submitted = await reach('POST', `${base}${API}/bulkImportRequests`, {
      integrationSortingOrder: Number(flags.integration),
      payload,
    });
    print(submitted.json);
    if (submitted.status !== 202) {
      process.exitCode = 1;
      return;
    }
    const { requestId } = submitted.json as { requestId: string };
    say(`request ${requestId} accepted; follow it with: ifw status ${requestId}${flags.wait === true ? '' : ' --wait'}`);
    // The spec's guidance: the first poll after the first interval, not at once.
    if (flags.wait === true) await waitAndReport(base, requestId, flags, false);
  });

  withWaitOptions(
    program
      .command('status')
      .description('show a bulk import request of a running service')
      .argument('<requestId>')
      .option('--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)')
      .option('--details', 'show counts and per-record errors'),
  ).action(async (requestId: string, flags: WaitFlags & { url?: string; details?: boolean }) => {
    const base = baseUrl(flags.url);
    if (flags.wait === true) {
      say(`waiting for request ${requestId}`);
      // Resuming: the request may have ended meanwhile, so the first poll is at once.
      await waitAndReport(base, requestId, flags, true);
      return;
    }
    const polled = await reach('GET', `${base}${API}/bulkImportRequests(${requestId})${flags.details === true ? '/details' : ''}`);
    print(polled.json);
    if (polled.status !== 200) process.exitCode = 1;
  });

  addRequestCommands(program);
}

/**
 * `ifw requests list|show|cancel|reset|resubmit`: an operator's view of the Bulk Import API. Each prints
 * the service's JSON answer; exit code 0 for a 2xx answer, 1 otherwise (`resubmit --wait`: as `submit --wait`).
 */
function addRequestCommands(program: Command): void {
  const requests = program.command('requests').description('list and act on the bulk import requests of a running service');
  const urlOption = ['--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)'] as const;
  const answer = (res: Answer): void => {
    print(res.json);
    if (res.status < 200 || res.status > 299) process.exitCode = 1;
  };

  requests
    .command('list')
    .description('list requests, newest first (GET bulkImportRequests with $filter)')
    .option('--status <status>', 'Pending, Processing, Completed, Failed or Cancelled')
    .option('--integration <sortingOrder>', "the integration's Sorting Order")
    .option('--since <time>', 'submitted at or after this time (ISO 8601, e.g. 2026-11-26T00:00:00Z)')
    .option('--top <n>', 'at most this many (the service pages longer lists)')
    .option(...urlOption)
    .action(async (flags: { status?: string; integration?: string; since?: string; top?: string; url?: string }) => {
      const filter = [
        flags.status === undefined ? undefined : `status eq '${flags.status.replace(/'/g, "''")}'`,
        flags.integration === undefined ? undefined : `integrationSortingOrder eq ${flags.integration}`,
        flags.since === undefined ? undefined : `submittedAt ge ${flags.since}`,
      ].filter((f) => f !== undefined);
      const query = new URLSearchParams({ $orderby: 'submittedAt desc' });
      if (filter.length > 0) query.set('$filter', filter.join(' and '));
      if (flags.top !== undefined) query.set('$top', flags.top);
      answer(await reach('GET', `${baseUrl(flags.url)}${API}/bulkImportRequests?${query.toString()}`));
    });

  requests
    .command('show')
    .description('show a request with its counts and per-record errors (GET …/details)')
    .argument('<requestId>')
    .option(...urlOption)
    .action(async (requestId: string, flags: { url?: string }) => {
      answer(await reach('GET', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/details`));
    });

  for (const [verb, what] of [
    ['cancel', 'cancel a Pending or Processing request'],
    ['reset', 'put a request stuck in Processing back to Pending'],
  ] as const) {
    requests
      .command(verb)
      .description(`${what} (Microsoft.NAV.${verb})`)
      .argument('<requestId>')
      .option(...urlOption)
      .action(async (requestId: string, flags: { url?: string }) => {
        answer(await reach('POST', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/Microsoft.NAV.${verb}`));
      });
  }

  withWaitOptions(
    requests
      .command('resubmit')
      .description('submit the payload of a Failed or Cancelled request again, as a new request (Microsoft.NAV.resubmit)')
      .argument('<requestId>')
      .option(...urlOption),
  ).action(async (requestId: string, flags: WaitFlags & { url?: string }) => {
    const base = baseUrl(flags.url);
    if (flags.wait === true) scheduleOf(flags);
    const res = await reach('POST', `${base}${API}/bulkImportRequests(${requestId})/Microsoft.NAV.resubmit`);
    answer(res);
    if (res.status !== 202) return;
    const created = (res.json as { requestId: string }).requestId;
    say(`request ${requestId} resubmitted as ${created}; follow it with: ifw status ${created}${flags.wait === true ? '' : ' --wait'}`);
    if (flags.wait === true) await waitAndReport(base, created, flags, false);
  });
}
