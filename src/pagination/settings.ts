/**
 * Validation rules of the Pagination section (spec 2.3), in the spec's field names, so that the
 * endpoint API refuses what a paginator could not run and a run never starts on bad settings.
 */
import { pathProblem } from '../json-path/lookup.js';
import { settingValue, type AnyPagination } from './declaration.js';
import { PAGINATIONS, type PaginationSettings } from './types.js';

/** Upper bounds that keep a typo (an extra zero or three) from turning into an endless import. */
export const MAX_MAX_PAGES = 100_000;
export const MAX_PAGE_SIZE = 100_000;

const wholeNumber = (value: number, min: number, max: number): boolean => Number.isSafeInteger(value) && value >= min && value <= max;
const blank = (value: unknown): boolean => typeof value !== 'string' || value.trim() === '';

function checkPath(problems: string[], field: string, path: string): void {
  const problem = pathProblem(path);
  if (problem !== null) problems.push(`${field}: ${problem}`);
}

/** Every rule the settings break, as sentences; empty when they are valid. */
export function paginationProblems(settings: PaginationSettings): string[] {
  const problems: string[] = [];
  if (!wholeNumber(settings.maxPages, 1, MAX_MAX_PAGES)) problems.push(`Max Pages must be a whole number from 1 to ${MAX_MAX_PAGES}`);
  if (settings.pageSize !== null && !wholeNumber(settings.pageSize, 1, MAX_PAGE_SIZE)) {
    problems.push(`Page Size must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
  checkPath(problems, 'Response Data Path', settings.responseDataPath);
  const declaration: AnyPagination | undefined = PAGINATIONS.find((d) => d.type === settings.type);
  if (declaration === undefined) return [...problems, `unknown Pagination Type ${JSON.stringify(settings)}`];
  for (const [key, setting] of Object.entries(declaration.settings)) {
    const value = settingValue(settings, key);
    switch (setting.kind) {
      case 'jsonPath':
        if (blank(value)) problems.push(`${setting.label} is required for Pagination Type ${declaration.title}`);
        else checkPath(problems, setting.label, value as string);
        break;
      case 'queryParameter':
        if (blank(value)) problems.push(`${setting.label} is required`);
        break;
      case 'optionalJsonPath':
        if (!blank(value)) checkPath(problems, setting.label, value as string);
        break;
      case 'text':
      case 'switch':
        break;
      case 'choice':
        if (value !== undefined && value !== null && !setting.options.includes(value as string))
          problems.push(`${setting.label} must be one of ${setting.options.join(', ')}`);
        break;
      default: {
        const unexpected: never = setting;
        problems.push(`unknown kind of setting ${JSON.stringify(unexpected)}`);
      }
    }
  }
  for (const rule of declaration.rules) if (rule.broken(settings)) problems.push(rule.problem);
  return problems;
}
