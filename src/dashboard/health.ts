/**
 * The dashboard's health line, decided from the counts it already shows: red when something failed
 * in the last 24 hours (a request, a run), amber when something needs a look before it fails (a job
 * queue entry On Hold or in Error, a run that completed with warnings), green otherwise. Each reason
 * is a sentence an administrator acts on; the line shows the worst level and every reason.
 */

export type HealthLevel = 'green' | 'amber' | 'red';

export interface HealthInput {
  /** Bulk import requests of the last 24 hours per status; undefined when the user may not see requests. */
  readonly requests?: ReadonlyMap<string, number>;
  /** REST import runs of the last 24 hours per status. */
  readonly runs: ReadonlyMap<string, number>;
  /** Of those, the runs that completed with warnings (they stopped short: records may be missing). */
  readonly runsWithWarnings?: number;
  /** The job queue entries: what they are called and their status. */
  readonly entries: readonly { readonly description: string; readonly status: string }[];
  /** The alarms that hold now, besides the entries On Hold or in Error (alarms.ts): critical ones are red. */
  readonly alarms?: readonly { readonly severity: 'critical' | 'warning'; readonly symptom: string }[];
}

export interface Health {
  readonly level: HealthLevel;
  /** Why, worst first; for green, what is well. */
  readonly reasons: readonly string[];
}

const plural = (n: number, noun: string): string => `${n.toLocaleString('en')} ${noun}${n === 1 ? '' : 's'}`;
const count = (byStatus: ReadonlyMap<string, number> | undefined, status: string): number => byStatus?.get(status) ?? 0;
const total = (byStatus: ReadonlyMap<string, number> | undefined): number => [...(byStatus?.values() ?? [])].reduce((a, b) => a + b, 0);

export function healthOf(input: HealthInput): Health {
  const red: string[] = [];
  const amber: string[] = [];
  for (const a of input.alarms ?? []) (a.severity === 'critical' ? red : amber).push(a.symptom);
  const failedRequests = count(input.requests, 'Failed');
  if (failedRequests > 0) red.push(`${plural(failedRequests, 'request')} Failed in the last 24 h`);
  const failedRuns = count(input.runs, 'Failed');
  if (failedRuns > 0) red.push(`${plural(failedRuns, 'import run')} Failed in the last 24 h`);
  const warned = input.runsWithWarnings ?? 0;
  if (warned > 0) amber.push(`${plural(warned, 'import run')} completed with warnings in the last 24 h`);
  for (const e of input.entries) {
    if (e.status === 'On Hold') amber.push(`job queue entry ${e.description} is On Hold`);
    else if (e.status === 'Error') amber.push(`job queue entry ${e.description} is in Error`);
  }
  if (red.length > 0) return { level: 'red', reasons: [...red, ...amber] };
  if (amber.length > 0) return { level: 'amber', reasons: amber };
  return { level: 'green', reasons: [greenReason(input)] };
}

function greenReason(input: HealthInput): string {
  const inFlight = count(input.requests, 'Pending') + count(input.requests, 'Processing');
  const requests = total(input.requests);
  const runs = total(input.runs);
  if (input.requests !== undefined && requests > 0) {
    if (inFlight > 0) return `No failures in the last 24 h; ${plural(inFlight, 'request')} in progress`;
    return count(input.requests, 'Cancelled') > 0 ? 'No failures in the last 24 h' : 'All requests completed';
  }
  return runs > 0 ? 'No failures in the last 24 h' : 'Nothing failed; no imports in the last 24 h';
}
