/**
 * The output of the client commands (`ifw submit`, `ifw status`, `ifw requests …`, and any other command
 * that talks to a running service): lines for a person by default; with `--json`, the service's JSON
 * answer as it is (one document on stdout), for scripts. Messages about progress go to stderr either way.
 *
 * Exit codes: 0 the request Completed (or, without --wait, was accepted / answered); 1 it Failed or was
 * Cancelled, or the service refused or could not be reached; 2 it did not end within the wait
 * (still Pending or Processing: resume later); 3 a bulk action whose answer refused some requests
 * (their status did not allow the action; the others were acted on).
 */
import type { Command } from 'commander';
import type { Answer } from './client-http.js';

/** Exit code of a wait that reached its cap with the request still Pending or Processing. */
export const EXIT_TIMED_OUT = 2;
/** Exit code of a bulk action that refused some of the requests it took. */
export const EXIT_SOME_REFUSED = 3;

/** A message about progress, on stderr. */
export const say = (line: string): void => void process.stderr.write(`ifw: ${line}\n`);

/** Whether the command was given `--json`; set by the hook every client command runs first. */
let asJson = false;

/** Whether the command was given `--json`: for output that is not an answer as it came (a summary of its own). */
export const printsJson = (): boolean => asJson;

/** Every client command takes --json. */
export const withJson = (cmd: Command): Command =>
  cmd
    .option('--json', "print the service's JSON answer as it is (for scripts), not lines for a person")
    .hook('preAction', (_this, action) => {
      asJson = action.opts<{ json?: boolean }>().json === true;
    });

/**
 * Prints an answer of the service: as it is with --json, else in lines for a person (`human`, or a
 * generic form). An error answer (`{"error":{code,message}}`) is told on stderr without --json.
 */
export function print(value: unknown, human?: (value: never) => string): void {
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
export function lines(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  const entries = Object.entries(value).filter(([k]) => !k.startsWith('@odata.'));
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries
    .map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${typeof v === 'object' && v !== null ? JSON.stringify(v) : cell(v)}`)
    .join('\n');
}

/** Rows as aligned columns under a header. */
export function columns(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const text = rows.map((r) => r.map(cell));
  const widths = header.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...text.map(line)].join('\n');
}

/** Prints an answer of the service (as print does) and sets exit code 1 unless it is a 2xx. */
export function printAnswer(res: Answer, human?: (value: never) => string): void {
  print(res.json, human);
  if (res.status < 200 || res.status > 299) process.exitCode = 1;
}
