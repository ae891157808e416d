/**
 * `ifw endpoints cursor <code> [--set <value> | --reset]`: an incremental endpoint's bookmark on a
 * running service (restApiEndpoints, Microsoft.NAV.setCursor and resetCursor). Without a flag it shows
 * the bookmark; `--set` and `--reset` change it and show the result. `--json` prints the service's answer.
 *
 * Exit codes: 0 the service answered 2xx; 1 it refused (unknown endpoint: 404; no cursor field or a
 * value not of its type: 400; no permission: 401/403) or could not be reached.
 */
import type { Command } from 'commander';
import { ConfigError } from '../core/config.js';
import { API, baseUrl, call, errorLine, isSuccess, URL_OPTION } from './service-client.js';

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
  const endpoints = program.command('endpoints').description('the REST API endpoints of a running service');
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
          ? await call('POST', `${item}/Microsoft.NAV.setCursor`, { value: flags.set })
          : flags.reset === true
            ? await call('POST', `${item}/Microsoft.NAV.resetCursor`)
            : await call('GET', item);
      if (flags.json === true) console.log(JSON.stringify(answer.json, null, 2));
      if (!isSuccess(answer)) {
        if (flags.json !== true) process.stderr.write(`ifw: ${errorLine(answer)}\n`);
        process.exitCode = 1;
        return;
      }
      if (flags.json !== true) console.log(cursorLines(answer.json as EndpointCursor).join('\n'));
    });
}
