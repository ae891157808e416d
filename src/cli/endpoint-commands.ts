/**
 * `ifw endpoints detect-pagination <code>`: Detect pagination on a saved endpoint of a running service
 * (`restApiEndpoints('<code>')/Microsoft.NAV.detectPagination`): the proposed Pagination section with its
 * evidence, and the problems of the endpoint's current settings with their remedies. Prints lines for a
 * person, or with `--json` the service's answer.
 *
 * Exit codes: 0 the settings agree with what the API showed; 1 the check found problems, page 1 could
 * not be fetched, or the service refused (unknown endpoint: 404; no permission) or could not be reached.
 */
import type { Command } from 'commander';
import { API, baseUrl, call, errorLine, isSuccess, URL_OPTION } from './service-client.js';

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
      const answer = await call(
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
}
