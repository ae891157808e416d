/**
 * Checking an endpoint's Pagination section against its API before a run imports anything: where the
 * settings and what the first pages showed disagree, a problem in the words of the spec's "Pagination
 * problems" table (section 7), with its remedy. Pure: rest-source fetches the pages with the
 * configured settings (at most three) and with detection's proposal (detect.ts), and hands both here.
 */
import type { Proposal } from './detect.js';
import { propertiesHint } from './more-signals.js';
import { paginationOf, type PaginationSettings } from './types.js';

/** The spec's symptoms (section 7, "Pagination problems"), and the one a run that would fail has. */
export const PAGINATION_SYMPTOMS = [
  'Only the first page is imported',
  'Pagination runs to Max Pages',
  'Max Pages reached with records missing',
  'A run would fail',
] as const;
export type PaginationSymptom = (typeof PAGINATION_SYMPTOMS)[number];

/** One disagreement: the spec's symptom, what was seen, and the spec's remedy for this case. */
export interface PaginationProblem {
  readonly symptom: PaginationSymptom;
  readonly message: string;
  readonly remedy: string;
}

/** A page fetched with the configured settings: its records as pagination counts them, and the paginator's step after it. */
export interface CheckedPage {
  readonly pageNo: number;
  /** Records counted at the configured Response Data Path (or the records path), null when it finds no array. */
  readonly counted: number | null;
  readonly step:
    | { readonly kind: 'next'; readonly warning?: string }
    | { readonly kind: 'stop'; readonly detail: string; readonly warning?: string }
    | { readonly kind: 'fail'; readonly error: string };
}

export interface CheckInput {
  /** The endpoint's settings (the engine's form). */
  readonly configured: PaginationSettings;
  /** Response Data Path as configured (null: not set). */
  readonly configuredDataPath: string | null;
  /** What detection proposes, confirmed by the pages it followed. */
  readonly proposal: Proposal;
  /** Page 1's body. */
  readonly firstBody: unknown;
  /** The pages fetched with the configured settings, at most three. */
  readonly pages: readonly CheckedPage[];
}

const LOOP = /already (requested|sent)/;

/** The spec's remedy for a paginator's warning, by the symptom its words name. */
function symptomOf(warning: string): PaginationSymptom {
  if (warning.startsWith('Max Pages reached')) return 'Max Pages reached with records missing';
  if (warning.startsWith('pages have more records than Page Size')) return 'Pagination runs to Max Pages';
  return 'Only the first page is imported';
}
const REMEDIES: Readonly<Record<PaginationSymptom, string>> = {
  'Only the first page is imported': 'Set the type, match Page Size, fix the path',
  'Pagination runs to Max Pages': 'Fix the path or Page Size; temporarily set Max Pages low (for example 3)',
  'Max Pages reached with records missing': 'Raise Max Pages or Page Size',
  'A run would fail': 'Fix the setting the message names',
};

const describe = (s: PaginationSettings): string => paginationOf(s.type).title;

/** Where the configured Pagination section and the API disagree; empty when they agree on what was seen. */
export function checkPagination(input: CheckInput): PaginationProblem[] {
  const { configured, proposal, pages } = input;
  const problems: PaginationProblem[] = [];
  const add = (symptom: PaginationSymptom, message: string, remedy: string): void => {
    if (!problems.some((p) => p.message === message)) problems.push({ symptom, message, remedy });
  };
  const proposed = proposal.settings;
  const first = pages[0];
  const realSize = proposal.firstPageRecords;
  // The API has more than page 1: following the proposal found new records, or the response says so.
  const saysMore = (got: number | null): boolean =>
    (proposal.claimedTotal !== null && got !== null && proposal.claimedTotal > got) || (proposal.claimedPages ?? 0) > 1;
  const paginates = proposed.type !== 'none' && (proposal.morePages || saysMore(realSize));

  if (configured.type === 'none' && paginates)
    add(
      'Only the first page is imported',
      `Pagination Type is None, but the API pages its records (${proposal.evidence.find((e) => e.includes('Pagination Type')) ?? describe(proposed)}): only the first page would be imported`,
      `Set the type: ${describe(proposed)}, with the proposed settings`,
    );

  const path = input.configuredDataPath;
  if (first !== undefined && first.counted === null && path !== null && path !== '' && path !== '$')
    add(
      'Only the first page is imported',
      `Response Data Path "${path}" finds no array in the response${propertiesHint(input.firstBody)}: records cannot be counted, so only the first page would be imported`,
      `Fix the path: set Response Data Path to ${proposed.responseDataPath === '' ? '"" (blank: the response root is the array)' : `"${proposed.responseDataPath}"`}`,
    );

  if (paginationOf(configured.type).pageSize === 'counted' && configured.pageSize !== null && first?.counted != null && realSize !== null) {
    const got = first.counted;
    const more = proposal.morePages || saysMore(got);
    if (got < configured.pageSize && more)
      add(
        'Only the first page is imported',
        `Page Size ${configured.pageSize} but the API returned ${got} records: only the first page would be imported`,
        `Match Page Size: set it to ${got}, the records the API returns per page`,
      );
    else if (got > configured.pageSize)
      add(
        'Pagination runs to Max Pages',
        `Page Size ${configured.pageSize} but the API returned ${got} records on page 1: pages would be requested past the real ones, up to Max Pages`,
        `Match Page Size: set it to ${got}, the records the API returns per page`,
      );
  }

  if (
    configured.type === 'nextLink' &&
    proposed.type === 'nextLink' &&
    configured.nextLinkPath !== proposed.nextLinkPath &&
    first?.step.kind === 'stop'
  )
    add(
      'Only the first page is imported',
      `Next Link JSON Path "${configured.nextLinkPath}" finds nothing, but the response has a next link at "${proposed.nextLinkPath}": only the first page would be imported`,
      `Fix the path: set Next Link JSON Path to "${proposed.nextLinkPath}"`,
    );

  for (const page of pages) {
    const { step } = page;
    if (step.kind === 'fail') {
      if (LOOP.test(step.error))
        add(
          'Pagination runs to Max Pages',
          `${step.error} (a next link or cursor that repeats: the API would be asked for the same page again)`,
          'Fix the path (Next Link JSON Path, or the cursor setting) so that it finds the next page, not this one; temporarily set Max Pages low (for example 3)',
        );
      else add('A run would fail', `page ${page.pageNo}: ${step.error}`, REMEDIES['A run would fail']);
    } else if (
      step.warning !== undefined &&
      !problems.some((p) => p.symptom === symptomOf(step.warning!) && p.symptom !== 'Max Pages reached with records missing')
    )
      add(symptomOf(step.warning), step.warning, REMEDIES[symptomOf(step.warning)]);
  }

  const perPage = configured.pageSize ?? realSize;
  const needed =
    proposal.claimedPages ??
    (proposal.claimedTotal !== null && perPage !== null && perPage > 0 ? Math.ceil(proposal.claimedTotal / perPage) : null);
  if (needed !== null && needed > configured.maxPages && !problems.some((p) => p.symptom === 'Max Pages reached with records missing'))
    add(
      'Max Pages reached with records missing',
      `Max Pages ${configured.maxPages} would be reached: the API has ${needed} pages${proposal.claimedTotal === null ? '' : ` (${proposal.claimedTotal} records)`}, so records would be missing`,
      `Raise Max Pages (to ${needed} or more) or Page Size`,
    );
  return problems;
}
