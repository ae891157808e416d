/**
 * `ifw requests list|show|cancel|reset|resubmit|delete|payload|bulk`: an operator's view of the Bulk
 * Import API. Exit code 0 for a 2xx answer, 1 otherwise (`resubmit --wait`: as `submit --wait`;
 * `bulk`: 3 when some requests were refused). Also how a request is shown in lines, for `ifw status`.
 */
import type { Command } from 'commander';
import { createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ConfigError } from '../core/config.js';
import { API, authorization, baseUrl, reach, URL_OPTION } from './client-http.js';
import { columns, EXIT_SOME_REFUSED, lines, print, printAnswer, printsJson, say, withJson } from './client-output.js';
import { scheduleOf, waitAndReport, withWaitOptions, type WaitFlags } from './client-wait.js';

interface RequestAnswer {
  requestId: string;
  status: string;
  integrationSortingOrder?: number;
  submittedAt?: string;
  recordCount?: number;
  errorMessage?: string;
}

/** A list of requests as columns (`requests list`). */
export const requestTable = (list: { value: RequestAnswer[]; '@odata.nextLink'?: string }): string =>
  `${columns(
    ['REQUEST', 'STATUS', 'INTEGRATION', 'SUBMITTED', 'RECORDS', 'ERROR'],
    list.value.map((r) => [r.requestId, r.status, r.integrationSortingOrder, r.submittedAt, r.recordCount, r.errorMessage]),
  )}${list.value.length === 0 ? '\n(no requests match)' : ''}${list['@odata.nextLink'] === undefined ? '' : '\n(more: raise --top or narrow the filter)'}`;

interface DetailsAnswer extends RequestAnswer {
  errors: { recordNo: number | null; field: string | null; value: string | null; message: string }[];
}

/** A request's details as lines, its record errors as columns (`status --details`, `requests show`). */
export const detailsText = (d: DetailsAnswer): string => {
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

/** An accepted (or acted on) request in one line. */
export const acceptedText = (a: { requestId: string; status: string; submittedAt?: string }): string =>
  `request ${a.requestId} is ${a.status}${a.submittedAt === undefined ? '' : ` (submitted ${a.submittedAt})`}`;

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

export function addRequestCommands(program: Command): void {
  const requests = program.command('requests').description('list and act on the bulk import requests of a running service');
  withJson(
    requests
      .command('list')
      .description('list requests, newest first (GET bulkImportRequests with $filter)')
      .option('--status <status>', 'Pending, Processing, Completed, Failed or Cancelled')
      .option('--integration <sortingOrder>', "the integration's Sorting Order")
      .option('--since <time>', 'submitted at or after this time (ISO 8601, e.g. 2026-11-26T00:00:00Z)')
      .option('--top <n>', 'at most this many (the service pages longer lists)')
      .option(...URL_OPTION),
  ).action(async (flags: { status?: string; integration?: string; since?: string; top?: string; url?: string }) => {
    const filter = filterOf(flags);
    const query = new URLSearchParams({ $orderby: 'submittedAt desc' });
    if (filter !== '') query.set('$filter', filter);
    if (flags.top !== undefined) query.set('$top', flags.top);
    printAnswer(await reach('GET', `${baseUrl(flags.url)}${API}/bulkImportRequests?${query.toString()}`), requestTable);
  });

  withJson(
    requests
      .command('show')
      .description('show a request with its counts and per-record errors (GET …/details)')
      .argument('<requestId>')
      .option(...URL_OPTION),
  ).action(async (requestId: string, flags: { url?: string }) => {
    printAnswer(await reach('GET', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/details`), detailsText);
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
        .option(...URL_OPTION),
    ).action(async (requestId: string, flags: { url?: string }) => {
      printAnswer(await reach('POST', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})/Microsoft.NAV.${verb}`), acceptedText);
    });
  }

  withJson(
    withWaitOptions(
      requests
        .command('resubmit')
        .description('submit the payload of a Failed or Cancelled request again, as a new request (Microsoft.NAV.resubmit)')
        .argument('<requestId>')
        .option(...URL_OPTION),
    ),
  ).action(async (requestId: string, flags: WaitFlags & { url?: string }) => {
    const base = baseUrl(flags.url);
    if (flags.wait === true) scheduleOf(flags);
    const res = await reach('POST', `${base}${API}/bulkImportRequests(${requestId})/Microsoft.NAV.resubmit`);
    if (res.status !== 202 || flags.wait !== true) printAnswer(res, acceptedText);
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
      .option(...URL_OPTION),
  ).action(async (requestId: string, flags: { url?: string }) => {
    const res = await reach('DELETE', `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})`);
    if (res.status === 204) {
      print(printsJson() ? { requestId, deleted: true } : `request ${requestId} deleted`);
      return;
    }
    printAnswer(res);
  });

  withJson(
    requests
      .command('payload')
      .description("write a request's payload to stdout (or --output), streamed as it arrives (GET bulkImportRequests(<id>)/payload)")
      .argument('<requestId>')
      .option('-o, --output <file>', 'write it to this file instead of stdout')
      .option(...URL_OPTION),
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
      .option(...URL_OPTION),
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
          printAnswer(res);
          return;
        }
        const got = res.json as BulkAnswer;
        answers.push(got);
        if (!printsJson()) print(got, bulkText);
        if (got.refused > 0) process.exitCode = EXIT_SOME_REFUSED;
        if (flags.all !== true || !got.more || got.next === null) break;
        after = got.next;
      }
      // --json: one document; with --all, the answers of every call in order.
      if (printsJson()) print(flags.all === true ? answers : answers[0]);
    },
  );
}
