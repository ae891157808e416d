/**
 * Validation rules of the Pagination section (spec 2.3), in the spec's field names, so that the
 * endpoint API refuses what a paginator could not run and a run never starts on bad settings.
 */
import { pathProblem } from '../json-path/lookup.js';
import type { PaginationSettings } from './types.js';

/** Upper bounds that keep a typo (an extra zero or three) from turning into an endless import. */
export const MAX_MAX_PAGES = 100_000;
export const MAX_PAGE_SIZE = 100_000;

const wholeNumber = (value: number, min: number, max: number): boolean => Number.isSafeInteger(value) && value >= min && value <= max;

function checkPath(problems: string[], field: string, path: string): void {
  const problem = pathProblem(path);
  if (problem !== null) problems.push(`${field}: ${problem}`);
}

function checkParam(problems: string[], field: string, name: string): void {
  if (name.trim() === '') problems.push(`${field} is required`);
}

/** Every rule the settings break, as sentences; empty when they are valid. */
export function paginationProblems(settings: PaginationSettings): string[] {
  const problems: string[] = [];
  if (!wholeNumber(settings.maxPages, 1, MAX_MAX_PAGES)) problems.push(`Max Pages must be a whole number from 1 to ${MAX_MAX_PAGES}`);
  if (settings.pageSize !== null && !wholeNumber(settings.pageSize, 1, MAX_PAGE_SIZE)) {
    problems.push(`Page Size must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
  checkPath(problems, 'Response Data Path', settings.responseDataPath);
  switch (settings.type) {
    case 'none':
      break;
    case 'nextLink':
      if (settings.nextLinkPath.trim() === '') problems.push('Next Link JSON Path is required for Pagination Type Next Link');
      else checkPath(problems, 'Next Link JSON Path', settings.nextLinkPath);
      break;
    case 'pageNumber':
      checkParam(problems, 'Page Parameter Name', settings.pageParam);
      break;
    case 'offsetLimit':
      checkParam(problems, 'Offset Parameter Name', settings.offsetParam);
      checkParam(problems, 'Limit Parameter Name', settings.limitParam);
      if (settings.offsetParam !== '' && settings.offsetParam === settings.limitParam) {
        problems.push('Offset Parameter Name and Limit Parameter Name must differ');
      }
      break;
    default: {
      const unexpected: never = settings;
      problems.push(`unknown Pagination Type ${JSON.stringify(unexpected)}`);
    }
  }
  return problems;
}
