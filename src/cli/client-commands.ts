/**
 * `ifw submit`, `ifw status` and `ifw requests …`: a client of a running service over HTTP. With `--wait` they poll the
 * request until it ends, as the spec advises a caller (poll.ts). The request id goes to stderr the
 * moment it is known, so a caller that stops waiting can resume with `ifw status <id> --wait`.
 *
 * Output: lines for a person by default; with `--json`, the service's JSON answer as it is (one
 * document on stdout), for scripts. Messages about progress go to stderr either way.
 *
 * Exit codes: 0 the request Completed (or, without --wait, was accepted / answered); 1 it Failed or was
 * Cancelled, or the service refused or could not be reached; 2 it did not end within the wait
 * (still Pending or Processing: resume later); 3 a bulk action whose answer refused some requests
 * (their status did not allow the action; the others were acted on).
 */
import type { Command } from 'commander';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '../core/config.js';
import { DEFAULT_SCHEDULE, waitForEnd, type PollAnswer, type PollSchedule } from './poll.js';

const API = '/api/vendor/integrationFramework/v1.0';

/** Exit code of a wait that reached its cap with the request still Pending or Processing. */
export const EXIT_TIMED_OUT = 2;
/** Exit code of a bulk action that refused some of the requests it took. */
export const EXIT_SOME_REFUSED = 3;

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

const say = (line: string): void => void process.stderr.write(`ifw: ${line}\n`);

/** Whether the command was given `--json`; set by the hook every client command runs first. */
let asJson = false;

/**
 * Prints an answer of the service: as it is with --json, else in lines for a person (`human`, or a
 * generic form). An error answer (`{"error":{code,message}}`) is told on stderr without --json.
 */
function print(value: unknown, human?: (value: never) => string): void {
  if (asJson) {
    console.log(JSON.stringify(value, null, 2));
    return;
  }
  const error = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof value === 'object' && value !== null && error !== undefined) {
    say(`${String(error.message)} (${String(error.code)})`);
    return;
  }
  const text = human === undefined ? lines(value) : human(value as never);
  if (text !== '') console.log(text);
}

function cell(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** An object as `name: value` lines (nested values as JSON); text as it is. */
function lines(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  const entries = Object.entries(value).filter(([k]) => !k.startsWith('@odata.'));
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries
    .map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${typeof v === 'object' && v !== null ? JSON.stringify(v) : cell(v)}`)
    .join('\n');
}

/** Rows as aligned columns under a header. */
function columns(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const text = rows.map((r) => r.map(cell));
  const widths = header.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...text.map(line)].join('\n');
}

interface RequestAnswer {
  requestId: string;
  status: string;
  integrationSortingOrder?: number;
  submittedAt?: string;
  recordCount?: number;
  errorMessage?: string;
}

const requestTable = (list: { value: RequestAnswer[]; '@odata.nextLink'?: string }): string =>
  `${columns(
    ['REQUEST', 'STATUS', 'INTEGRATION', 'SUBMITTED', 'RECORDS', 'ERROR'],
    list.value.map((r) => [r.requestId, r.status, r.integrationSortingOrder, r.submittedAt, r.recordCount, r.errorMessage]),
  )}${list.value.length === 0 ? '\n(no requests match)' : ''}${list['@odata.nextLink'] === undefined ? '' : '\n(more: raise --top or narrow the filter)'}`;

interface DetailsAnswer extends RequestAnswer {
  errors: { recordNo: number | null; field: string | null; value: string | null; message: string }[];
}

const detailsText = (d: DetailsAnswer): string => {
  const { errors, ...rest } = d;
  return `${lines(rest)}${
    errors.length === 0
      ? ''
      : `\n\n${columns(
          ['RECORD', 'FIELD', 'VALUE', 'MESSAGE'],
          errors.map((e) => [e.recordNo, e.field, e.value, e.message]),
        )}`
  }`;
};

/** Every client command takes --json. */
const withJson = (cmd: Command): Command =>
  cmd
    .option('--json', "print the service's JSON answer as it is (for scripts), not lines for a person")
    .hook('preAction', (_this, action) => {
      asJson = action.opts<{ json?: boolean }>().json === true;
    });

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

const acceptedText = (a: { requestId: string; status: string; submittedAt?: string }): string =>
  `request ${a.requestId} is ${a.status}${a.submittedAt === undefined ? '' : ` (submitted ${a.submittedAt})`}`;

export function addClientCommands(program: Command): void {
  withJson(
    withWaitOptions(
      program
        .command('submit')
        .description('submit a payload to a running service (POST bulkImportRequests)')
        .requiredOption('-i, --integration <sortingOrder>', 'integration Sorting Order')
        .requiredOption('-f, --file <file>', 'file holding the JSON payload')
        .option('--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)')
        .addHelpText('after', '\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).'),
    ),
  ).action(async (flags: WaitFlags & { integration: string; file: string; url?: string }) => {
    const base = baseUrl(flags.url);
    // Checked before submitting: a typo in a wait option must not leave an accepted request behind.
    if (flags.wait === true) scheduleOf(flags);
    const payload = await readFile(flags.file, 'utf8');
    const submitted = await reach('POST', `${base}${API}/bulkImportRequests`, {
      integrationSortingOrder: Number(flags.integration),
      payload,
    });
    // With --wait, stdout is the ended request alone (one JSON document with --json).
    if (submitted.status !== 202 || flags.wait !== true) print(submitted.json, acceptedText);
    if (submitted.status !== 202) {
      process.exitCode = 1;
      return;
    }
    const { requestId } = submitted.json as { requestId: string };
    say(`request ${requestId} accepted; follow it with: ifw status ${requestId}${flags.wait === true ? '' : ' --wait'}`);
    // The spec's guidance: the first poll after the first interval, not at once.
    if (flags.wait === true) await waitAndReport(base, requestId, flags, false);
  });

  withJson(
    withWaitOptions(
      program
        .command('status')
        .description('show a bulk import request of a running service')
        .argument('<requestId>')
        .option('--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)')
        .option('--details', 'show counts and per-record errors'),
    ),
  ).action(async (requestId: string, flags: WaitFlags & { url?: string; details?: boolean }) => {
    const base = baseUrl(flags.url);
    if (flags.wait === true) {
      say(`waiting for request ${requestId}`);
      // Resuming: the request may have ended meanwhile, so the first poll is at once.
      await waitAndReport(base, requestId, flags, true);
      return;
    }
    const polled = await reach('GET', `${base}${API}/bulkImportRequests(${requestId})${flags.details === true ? '/details' : ''}`);
    print(polled.json, flags.details === true ? detailsText : undefined);
    if (polled.status !== 200) process.exitCode = 1;
  });

  addRequestCommands(program);
}

/** The $filter of the filter flags of `requests list` and `requests bulk`. */
function filterOf(flags: {
  status?: string;
  integration?: string;
  submitter?: string;
  since?: string;
  until?: string;
  filter?: string;
}): string {
  const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;
  return [
    flags.status === undefined ? undefined : `status eq ${quoted(flags.status)}`,
    flags.integration === undefined ? undefined : `integrationSortingOrder eq ${flags.integration}`,
    flags.submitter === undefined ? undefined : `submittedBy eq ${quoted(flags.submitter)}`,
    flags.since === undefined ? undefined : `submittedAt ge ${flags.since}`,
    flags.until === undefined ? undefined : `submittedAt lt ${flags.until}`,
    flags.filter,
  ]
    .filter((f) => f !== undefined && f !== '')
    .join(' and ');
}

interface BulkAnswer {
  action: string;
  matched: number;
  processed: number;
  succeeded: number;
  refused: number;
  results: { requestId: string; outcome: string; status: string | null; newRequestId: string | null; error: { message: string } | null }[];
  more: boolean;
  next: string | null;
}

const bulkText = (b: BulkAnswer): string =>
  `${b.matched} matched; ${b.processed} taken: ${b.succeeded} done, ${b.refused} refused${b.more ? `; more remain (continue with --after ${b.next ?? ''})` : ''}${
    b.results.length === 0
      ? ''
      : `\n${columns(
          ['REQUEST', 'OUTCOME', 'STATUS', 'NEW REQUEST', 'REASON'],
          b.results.map((r) => [r.requestId, r.outcome, r.status, r.newRequestId, r.error?.message]),
        )}`
  }`;

/**
 * `ifw requests list|show|cancel|reset|resubmit|delete|payload|bulk`: an operator's view of the Bulk
 * Import API. Exit code 0 for a 2xx answer, 1 otherwise (`resubmit --wait`: as `submit --wait`;
 * `bulk`: 3 when some requests were refused).
 */
function addRequestCommands(program: Command): void {
  const requests = program.command('requests').description('list and act on the bulk import requests of a running service');
  const urlOption = ['--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)'] as const;
  const answer = (res: Answer, human?: (value: never) => string): void => {
    print(res.json, human);
    if (res.status < 200 || res.status > 299) process.exitCode = 1;
  };

  withJson(
    requests
      .command('list')
      .description('list requests, newest first (GET bulkImportRequests with $filter)')
      .option('--status <status>', 'Pending, Processing, Completed, Failed or Cancelled')
      .option('--integration <sortingOrder>', "the integration's Sorting Order")
      .option('--since <time>', 'submitted at or after this time (ISO 8601, e.g. 2026-11-26T00:00:00Z)')
      .option('--top <n>', 'at most this many (the service pages longer lists)')
      .option(...urlOption),
  ).action(async (flags: { status?: string; integration?: string; since?: string; top?: string; url?: string }) => {
    const filter = filterOf(flags);
    const query = new URLSearchParams({ $orderby: 'submittedAt desc' });
    if (filter !== '') query.set('$filter', filter);
    if (flags.top !== undefined) query.set('$top', flags.top);
    answer(await reach('GET', `${baseUrl(flags.url)}${API}/bulkImportRequests?${query.toString()}`), requestTable);
  });

  withJson(
    requests
      .command('show')
      .description('show a request with its counts and per-record errors (GET …/details)')
      .argument('<requestId>')
      .option(...urlOption),
  ).action(async (requestId: string, flags: { url?: string }) => {
    answer(await reach('GET', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/details`), detailsText);
  });

  for (const [verb, what] of [
    ['cancel', 'cancel a Pending or Processing request'],
    ['reset', 'put a request stuck in Processing back to Pending'],
  ] as const) {
    withJson(
      requests
        .command(verb)
        .description(`${what} (Microsoft.NAV.${verb})`)
        .argument('<requestId>')
        .option(...urlOption),
    ).action(async (requestId: string, flags: { url?: string }) => {
      answer(await reach('POST', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/Microsoft.NAV.${verb}`), acceptedText);
    });
  }

  withJson(
    withWaitOptions(
      requests
        .command('resubmit')
        .description('submit the payload of a Failed or Cancelled request again, as a new request (Microsoft.NAV.resubmit)')
        .argument('<requestId>')
        .option(...urlOption),
    ),
  ).action(async (requestId: string, flags: WaitFlags & { url?: string }) => {
    const base = baseUrl(flags.url);
    if (flags.wait === true) scheduleOf(flags);
    const res = await reach('POST', `${base}${API}/bulkImportRequests(${requestId})/Microsoft.NAV.resubmit`);
    if (res.status !== 202 || flags.wait !== true) answer(res, acceptedText);
    if (res.status !== 202) return;
    const created = (res.json as { requestId: string }).requestId;
    say(`request ${requestId} resubmitted as ${created}; follow it with: ifw status ${created}${flags.wait === true ? '' : ' --wait'}`);
    if (flags.wait === true) await waitAndReport(base, created, flags, false);
  });

  withJson(
    requests
      .command('delete')
      .description('delete a Completed, Failed or Cancelled request with its payload and errors (DELETE bulkImportRequests(<id>))')
      .argument('<requestId>')
      .option(...urlOption),
  ).action(async (requestId: string, flags: { url?: string }) => {
    const res = await reach('DELETE', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})`);
    if (res.status === 204) {
      print(asJson ? { requestId, deleted: true } : `request ${requestId} deleted`);
      return;
    }
    answer(res);
  });

  withJson(
    requests
      .command('payload')
      .description("write a request's payload to stdout (or --output), streamed as it arrives (GET bulkImportRequests(<id>)/payload)")
      .argument('<requestId>')
      .option('-o, --output <file>', 'write it to this file instead of stdout')
      .option(...urlOption),
  ).action(async (requestId: string, flags: { url?: string; output?: string }) => {
    const url = `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/payload`;
    let res: Response;
    try {
      res = await fetch(url, { headers: authorization() });
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
      throw new ConfigError(`cannot reach the service at ${new URL(url).origin} (${cause}); is it running? (--url or IFW_URL)`);
    }
    if (res.status !== 200 || res.body === null) {
      const text = await res.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      print(json);
      process.exitCode = 1;
      return;
    }
    // The payload itself is the output (it is JSON already): --json changes nothing.
    const target: Writable = flags.output === undefined ? process.stdout : createWriteStream(flags.output);
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), target);
  });

  withJson(
    requests
      .command('bulk')
      .description(
        'cancel, reset, resubmit or delete every request a filter selects (Microsoft.NAV.bulkCancel …), at most 1 000 a call; --all continues until none remains',
      )
      .argument('<action>', 'cancel, reset, resubmit or delete')
      .option('--status <status>', 'Pending, Processing, Completed, Failed or Cancelled')
      .option('--integration <sortingOrder>', "the integration's Sorting Order")
      .option('--submitter <label>', 'submitted by: user:<name> or application:<client id>')
      .option('--since <time>', 'submitted at or after this time (ISO 8601)')
      .option('--until <time>', 'submitted before this time (ISO 8601)')
      .option('--filter <odata>', "a $filter of the list, and'ed with the flags above")
      .option('--top <n>', 'at most this many per call (1 to 1000)')
      .option('--after <requestId>', 'continue after this request (the next of an earlier answer)')
      .option('--all', 'call again from next until no matching request remains')
      .option('--every-request', 'with no filter flag: act on every request (refused otherwise, so that a forgotten flag selects nothing)')
      .option(...urlOption),
  ).action(
    async (
      action: string,
      flags: {
        status?: string;
        integration?: string;
        submitter?: string;
        since?: string;
        until?: string;
        filter?: string;
        top?: string;
        after?: string;
        all?: boolean;
        everyRequest?: boolean;
        url?: string;
      },
    ) => {
      const names: Record<string, string> = { cancel: 'bulkCancel', reset: 'bulkReset', resubmit: 'bulkResubmit', delete: 'bulkDelete' };
      const name = names[action];
      if (name === undefined) throw new ConfigError(`the action must be cancel, reset, resubmit or delete, got "${action}"`);
      if (flags.top !== undefined && !/^\d{1,4}$/.test(flags.top))
        throw new ConfigError(`--top must be a whole number from 1 to 1000, got "${flags.top}"`);
      const url = `${baseUrl(flags.url)}${API}/bulkImportRequests/Microsoft.NAV.${name}`;
      const filter = filterOf(flags);
      if (filter === '' && flags.everyRequest !== true)
        throw new ConfigError(
          'no filter flag: give --status, --integration, --submitter, --since, --until or --filter, or --every-request to act on every request',
        );
      const answers: BulkAnswer[] = [];
      let after = flags.after;
      for (;;) {
        const res = await reach('POST', url, {
          filter,
          ...(flags.top === undefined ? {} : { top: Number(flags.top) }),
          ...(after === undefined ? {} : { after }),
        });
        if (res.status !== 200) {
          answer(res);
          return;
        }
        const got = res.json as BulkAnswer;
        answers.push(got);
        if (!asJson) print(got, bulkText);
        if (got.refused > 0) process.exitCode = EXIT_SOME_REFUSED;
        if (flags.all !== true || !got.more || got.next === null) break;
        after = got.next;
      }
      // --json: one document; with --all, the answers of every call in order.
      if (asJson) print(flags.all === true ? answers : answers[0]);
    },
  );
}
