/**
 * `ifw runs list|show|cancel`: an operator's view of the import runs of a running service (the
 * importRuns entity set). Each prints lines for a person, or with `--json` the service's JSON answer
 * (`show --json`: the run with its `errors` and `pages`), for scripts.
 *
 * Exit codes: 0 the service answered 2xx (whatever the run's status); 1 it refused (the run does not
 * exist: 404; it has already ended, for cancel: 409; no permission: 401/403; a bad option: 400) or could
 * not be reached. A refusal's error goes to stderr, or to stdout as the service's JSON with `--json`.
 */
import type { Command } from 'commander';
import { ConfigError } from '../core/config.js';
import { API, baseUrl, reach, errorLine, isSuccess, URL_OPTION, type Answer } from './client-http.js';

const RUN_STATUSES = ['Queued', 'Running', 'Completed', 'Failed', 'Cancelled'];

interface Run {
  readonly runId: string;
  readonly endpointCode: string;
  readonly integrationSortingOrder: number;
  readonly trigger: string;
  readonly status: string;
  readonly queuedAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly pagesFetched: number;
  readonly recordsFetched: number;
  readonly insertedCount: number;
  readonly updatedCount: number;
  readonly skippedCount: number;
  readonly stopReason: string | null;
  readonly warnings: readonly string[];
  readonly errorMessage: string;
}

interface RunError {
  readonly recordNo: number | null;
  readonly pageNo: number | null;
  readonly recordOnPage: number | null;
  readonly message: string;
}

/** One line per run: id, status, endpoint, when queued, pages and records, and the error if any. */
export function runLines(runs: readonly Run[]): string[] {
  if (runs.length === 0) return ['No import runs.'];
  return runs.map((r) =>
    [r.runId, r.status.padEnd(9), r.endpointCode, r.queuedAt, `${r.pagesFetched} pages`, `${r.recordsFetched} records`, r.errorMessage]
      .filter((part) => part !== '')
      .join('  '),
  );
}

/** A run as `key: value` lines, then its warnings and record errors (with their page and place). */
export function runDetailLines(run: Run, errors: readonly RunError[]): string[] {
  const lines = [
    `Run:          ${run.runId}`,
    `Status:       ${run.status}`,
    `Endpoint:     ${run.endpointCode} (integration ${run.integrationSortingOrder}, ${run.trigger})`,
    `Queued:       ${run.queuedAt}`,
    `Started:      ${run.startedAt ?? '—'}`,
    `Ended:        ${run.endedAt ?? '—'}`,
    `Fetched:      ${run.pagesFetched} pages, ${run.recordsFetched} records`,
    `Written:      ${run.insertedCount} inserted, ${run.updatedCount} updated, ${run.skippedCount} skipped`,
    `Stop reason:  ${run.stopReason ?? '—'}`,
  ];
  if (run.errorMessage !== '') lines.push(`Error:        ${run.errorMessage}`);
  for (const w of run.warnings) lines.push(`Warning:      ${w}`);
  if (errors.length > 0) {
    lines.push(`Record errors (${errors.length}):`);
    for (const e of errors) lines.push(`  ${e.pageNo === null ? '' : `page ${e.pageNo}, record ${e.recordOnPage}: `}${e.message}`);
  }
  return lines;
}

const out = (lines: readonly string[]): void => console.log(lines.join('\n'));
const printJson = (value: unknown): void => console.log(JSON.stringify(value, null, 2));

/** A refusal: the JSON on stdout with --json, else the error line on stderr; exit code 1 either way. */
function refused(answer: Answer, json: boolean): void {
  if (json) printJson(answer.json);
  else process.stderr.write(`ifw: ${errorLine(answer)}\n`);
  process.exitCode = 1;
}

/** Every item of a paged list (following @odata.nextLink), at most `max`. */
async function allOf<T>(url: string, max: number): Promise<{ readonly items: T[] } | { readonly refused: Answer }> {
  const items: T[] = [];
  let next: string | undefined = url;
  while (next !== undefined && items.length < max) {
    const answer = await reach('GET', next);
    if (!isSuccess(answer)) return { refused: answer };
    const body = answer.json as { value: T[]; '@odata.nextLink'?: string };
    items.push(...body.value);
    next = body['@odata.nextLink'];
  }
  return { items: items.slice(0, max) };
}

export function addRunCommands(program: Command): void {
  const runs = program
    .command('runs')
    .description('list, show and cancel the import runs of a running service')
    .addHelpText(
      'after',
      '\nExit codes: 0 the service answered; 1 it refused (unknown run, an ended run for cancel, no permission, a bad option) or could not be reached.\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).',
    );

  runs
    .command('list')
    .description('list runs, newest first (GET importRuns with $filter)')
    .option('--status <status>', RUN_STATUSES.join(', '))
    .option('--endpoint <code>', "the endpoint's code")
    .option('--since <time>', 'queued at or after this time (ISO 8601, e.g. 2026-11-26T00:00:00Z)')
    .option('--top <n>', 'at most this many (default 50)')
    .option('--json', "print the service's JSON answer")
    .option(...URL_OPTION)
    .action(async (flags: { status?: string; endpoint?: string; since?: string; top?: string; json?: boolean; url?: string }) => {
      if (flags.status !== undefined && !RUN_STATUSES.includes(flags.status))
        throw new ConfigError(`--status must be one of ${RUN_STATUSES.join(', ')}, got "${flags.status}"`);
      if (flags.top !== undefined && (!/^\d{1,6}$/.test(flags.top) || Number(flags.top) < 1))
        throw new ConfigError(`--top must be a whole number from 1, got "${flags.top}"`);
      const filter = [
        flags.status === undefined ? undefined : `status eq '${flags.status}'`,
        flags.endpoint === undefined ? undefined : `endpointCode eq '${flags.endpoint.replace(/'/g, "''")}'`,
        flags.since === undefined ? undefined : `queuedAt ge ${flags.since}`,
      ].filter((f) => f !== undefined);
      const query = new URLSearchParams({ $orderby: 'queuedAt desc' });
      if (filter.length > 0) query.set('$filter', filter.join(' and '));
      const max = Number(flags.top ?? 50);
      const listed = await allOf<Run>(`${baseUrl(flags.url)}${API}/importRuns?${query.toString()}`, max);
      if ('refused' in listed) return refused(listed.refused, flags.json === true);
      if (flags.json === true) printJson({ value: listed.items });
      else out(runLines(listed.items));
    });

  runs
    .command('show')
    .description('show a run with its record errors (each with its page and place) and, with --json, its pages')
    .argument('<runId>')
    .option('--json', 'print the run as the service answers it, with its errors and pages')
    .option(...URL_OPTION)
    .action(async (runId: string, flags: { json?: boolean; url?: string }) => {
      const base = `${baseUrl(flags.url)}${API}/importRuns(${encodeURIComponent(runId)})`;
      const run = await reach('GET', base);
      if (!isSuccess(run)) return refused(run, flags.json === true);
      const errors = await allOf<RunError>(`${base}/errors`, 1000);
      if ('refused' in errors) return refused(errors.refused, flags.json === true);
      if (flags.json !== true) return out(runDetailLines(run.json as Run, errors.items));
      const pages = await allOf<unknown>(`${base}/pages`, 100_000);
      if ('refused' in pages) return refused(pages.refused, true);
      printJson({ ...(run.json as object), errors: errors.items, pages: pages.items });
    });

  runs
    .command('cancel')
    .description('cancel a Queued or Running run: it stops, and nothing of it is imported (Microsoft.NAV.cancel)')
    .argument('<runId>')
    .option('--json', "print the service's JSON answer")
    .option(...URL_OPTION)
    .action(async (runId: string, flags: { json?: boolean; url?: string }) => {
      const answer = await reach('POST', `${baseUrl(flags.url)}${API}/importRuns(${encodeURIComponent(runId)})/Microsoft.NAV.cancel`);
      if (!isSuccess(answer)) return refused(answer, flags.json === true);
      const run = answer.json as Run;
      if (flags.json === true) printJson(run);
      else out([`import run ${run.runId} is ${run.status}`]);
    });
}
