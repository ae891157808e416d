/** Pieces every strategy shares: its decision function type and the Max Pages stop. */
import type { NextStep, PageRequest, PageResponse } from './types.js';

/** A strategy decides from the previous request and its response alone; history (loops) is the paginator's. */
export type Strategy = (previous: PageRequest, response: PageResponse) => NextStep;

/** The warning wording is part of the contract: users and docs search for it. */
export const maxPagesWarning = (maxPages: number): string =>
  `Max Pages reached (${maxPages}): the API has more pages; raise Max Pages or Page Size`;

export function maxPagesStop(maxPages: number, evidence: string): NextStep {
  return {
    kind: 'stop',
    reason: 'maxPages',
    detail: `stopped at Max Pages (${maxPages}) although ${evidence}`,
    warning: maxPagesWarning(maxPages),
  };
}
