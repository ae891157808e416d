/**
 * `ifw endpoints …`: a running service's REST API endpoints.
 *
 * - `detect-pagination <code>`: Detect pagination on a saved endpoint
 *   (`restApiEndpoints('<code>')/Microsoft.NAV.detectPagination`): the proposed Pagination section with
 *   its evidence, and the problems of the endpoint's current settings with their remedies. Exit codes: 0
 *   the settings agree with what the API showed; 1 the check found problems, page 1 could not be
 *   fetched, or the service refused (unknown endpoint: 404; no permission) or could not be reached.
 * - `cursor <code> [--set <value> | --reset]`: an incremental endpoint's bookmark (Microsoft.NAV.setCursor
 *   and resetCursor). Without a flag it shows the bookmark; `--set` and `--reset` change it and show the
 *   result. Exit codes: 0 the service answered 2xx; 1 it refused (unknown endpoint: 404; no cursor field
 *   or a value not of its type: 400; no permission: 401/403) or could not be reached.
 *
 * Each prints lines for a person, or with `--json` the service's answer.
 */
import type { Command } from 'commander';
import { ConfigError } from '../core/config.js';
import { API, baseUrl, reach, errorLine, isSuccess, URL_OPTION } from './client-http.js';

interface Detection {
  readonly ok: boolean;
  readonly url?: string;
  readonly proposal?: Readonly<Record<string, unknown>>;
  readonly evidence?: readonly string[];
  readonly notes?: readonly string[];
  readonly pages?: readonly { pageNo: number; url: string; recordCount: number | null }[];
  readonly problems?: readonly { symptom: string; message: string; remedy: string }[];
  readonly error?: { readonly message: string };
}

/** The answer as lines: the proposal as `field: value`, then the evidence, the notes, the pages and the problems. */
export function detectionLines(code: string, d: Detection): string[] {
  if (!d.ok) return [`Detect pagination of ${code}: page 1 could not be fetched: ${d.error?.message ?? 'unknown error'}`];
  const lines = [`Detect pagination of ${code} (${d.url ?? ''})`, 'Proposed settings:'];
  for (const [field, value] of Object.entries(d.proposal ?? {})) lines.push(`  ${field}: ${JSON.stringify(value)}`);
  lines.push('Evidence:', ...(d.evidence ?? []).map((e) => `  - ${e}`));
  if ((d.notes ?? []).length > 0) lines.push('Check before saving:', ...(d.notes ?? []).map((n) => `  - ${n}`));
  lines.push('Pages fetched:', ...(d.pages ?? []).map((p) => `  page ${p.pageNo}: ${p.recordCount ?? 'no'} records  ${p.url}`));
  const problems = d.problems ?? [];
  if (problems.length === 0) lines.push("Check: the endpoint's settings agree with what the API showed.");
  else {
    lines.push(`Check: ${problems.length} problem${problems.length === 1 ? '' : 's'} with the endpoint's settings:`);
    for (const p of problems) lines.push(`  ${p.symptom}: ${p.message}`, `    Remedy: ${p.remedy}`);
  }
  return lines;
}

interface EndpointCursor {
  readonly code: string;
  readonly cursorField: string | null;
  readonly cursorFieldType: string | null;
  readonly cursorFieldInitialValue: string | null;
  readonly cursorFieldLookback: string | null;
  readonly cursorValue: string | null;
  readonly cursorUpdatedAt: string | null;
  readonly lastSuccessfulRunStartedAt: string | null;
}

/** The bookmark as lines for a person. */
export function cursorLines(e: EndpointCursor): string[] {
  if (e.cursorField === null)
    return [`Endpoint:     ${e.code}`, 'Cursor field: — (no bookmark)', `Last success: ${e.lastSuccessfulRunStartedAt ?? '—'}`];
  return [
    `Endpoint:     ${e.code}`,
    `Cursor field: ${e.cursorField} (${e.cursorFieldType ?? 'dateTime'})`,
    `Bookmark:     ${e.cursorValue ?? `— (the next run sends the initial value${e.cursorFieldInitialValue === null ? '' : ` ${e.cursorFieldInitialValue}`})`}`,
    `Lookback:     ${e.cursorFieldLookback ?? '—'}`,
    `Changed:      ${e.cursorUpdatedAt ?? '—'}`,
    `Last success: ${e.lastSuccessfulRunStartedAt ?? '—'}`,
  ];
}

export function addEndpointCommands(program: Command): void {
  const endpoints = program
    .command('endpoints')
    .description('REST API endpoints of a running service')
    .addHelpText('after', '\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).');

  endpoints
    .command('detect-pagination')
    .description(
      'fetch page 1 of a saved endpoint and at most two more, propose its Pagination section with the evidence, and check its current settings (writes nothing); exit code 1 when the check finds problems',
    )
    .argument('<code>', 'REST API endpoint code')
    .option('--json', "print the service's JSON answer")
    .option(...URL_OPTION)
    .action(async (code: string, flags: { json?: boolean; url?: string }) => {
      const key = `'${code.replace(/'/g, "''")}'`;
      const answer = await reach(
        'POST',
        `${baseUrl(flags.url)}${API}/restApiEndpoints(${encodeURIComponent(key)})/Microsoft.NAV.detectPagination`,
      );
      if (!isSuccess(answer)) {
        if (flags.json === true) console.log(JSON.stringify(answer.json, null, 2));
        else process.stderr.write(`ifw: ${errorLine(answer)}\n`);
        process.exitCode = 1;
        return;
      }
      const detection = answer.json as Detection;
      if (flags.json === true) console.log(JSON.stringify(detection, null, 2));
      else console.log(detectionLines(code, detection).join('\n'));
      if (!detection.ok || (detection.problems ?? []).length > 0) process.exitCode = 1;
    });

  endpoints
    .command('cursor')
    .description("show, set or reset an incremental endpoint's cursor field bookmark")
    .argument('<code>', "the endpoint's code")
    .option('--set <value>', 'set the bookmark: a date-time (ISO 8601) or a number, as the cursor field type says')
    .option('--reset', 'clear the bookmark: the next run sends the initial value and starts over')
    .option('--json', "print the service's JSON answer")
    .option(...URL_OPTION)
    .addHelpText(
      'after',
      '\nExit codes: 0 the service answered; 1 it refused (unknown endpoint, no cursor field, a value not of its type, no permission) or could not be reached.\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).',
    )
    .action(async (code: string, flags: { set?: string; reset?: boolean; json?: boolean; url?: string }) => {
      if (flags.set !== undefined && flags.reset === true) throw new ConfigError('give --set or --reset, not both');
      const item = `${baseUrl(flags.url)}${API}/restApiEndpoints('${encodeURIComponent(code.replace(/'/g, "''"))}')`;
      const answer =
        flags.set !== undefined
          ? await reach('POST', `${item}/Microsoft.NAV.setCursor`, { value: flags.set })
          : flags.reset === true
            ? await reach('POST', `${item}/Microsoft.NAV.resetCursor`)
            : await reach('GET', item);
      if (flags.json === true) console.log(JSON.stringify(answer.json, null, 2));
      if (!isSuccess(answer)) {
        if (flags.json !== true) process.stderr.write(`ifw: ${errorLine(answer)}\n`);
        process.exitCode = 1;
        return;
      }
      if (flags.json !== true) console.log(cursorLines(answer.json as EndpointCursor).join('\n'));
    });
}
