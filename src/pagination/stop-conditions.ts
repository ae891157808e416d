/**
 * Stop conditions any paginating type can add (spec 4.4 has only its types' own): a page whose
 * Has More JSON Path is false (`has_more`, `pageInfo.hasNextPage`), records fetched reaching the
 * number at Total Count JSON Path, a page without records. They are settings shared by the types
 * (each declaration spreads STOP_CONDITION_SETTINGS into its own, so the API, storage and the console
 * take them up as its settings), and paginator.ts checks them before the type's own strategy, because
 * a page that says "no more" needs no further request whatever the type would ask next.
 */
import { compileLookup, describeJsonType } from '../json-path/lookup.js';
import { optionalJsonPathSetting, switchSetting, type AnySettings } from './declaration.js';
import type { NextStep, PageResponse } from './steps.js';

export const STOP_CONDITION_SETTINGS = {
  hasMorePath: optionalJsonPathSetting({
    field: 'hasMoreJsonPath',
    label: 'Has More JSON Path',
    description:
      'Stop condition (any type but none): where a page says whether more pages follow (has_more, pageInfo.hasNextPage, $.meta.more); fetching stops after a page where it is false',
    help: 'Optional: where a page says whether more follow (has_more, data.items.pageInfo.hasNextPage). Fetching stops after a page where it is false; it must be true or false on every page.',
  }),
  totalCountPath: optionalJsonPathSetting({
    field: 'totalCountJsonPath',
    label: 'Total Count JSON Path',
    description:
      'Stop condition (any type but none): where a page gives the total number of records (total_count, meta.total); fetching stops when the records fetched reach it',
    help: 'Optional: where a page gives the total number of records (total_count, meta.total). Fetching stops when the records fetched reach it (counted at Response Data Path).',
  }),
  stopOnEmptyPage: switchSetting({
    field: 'stopOnEmptyPage',
    label: 'Stop on an empty page',
    description: 'Stop condition (any type but none): fetching stops after a page without records (at Response Data Path); default false',
    help: 'Stop after a page without records (counted at Response Data Path).',
  }),
};

/** The stop conditions' values, as settings of a type that has them carry them. */
interface StopConditionValues {
  readonly hasMorePath?: string | null;
  readonly totalCountPath?: string | null;
  readonly stopOnEmptyPage?: boolean;
}

/**
 * The check of a type's stop conditions, or undefined when it has none set: `recordsSoFar` counts the
 * records of every page fetched, this one's included (null when some page had no record array).
 */
export type StopCheck = (pageNo: number, response: PageResponse, recordsSoFar: number | null) => NextStep | undefined;

function hasMoreCheck(path: string): StopCheck {
  const lookup = compileLookup(path);
  return (pageNo, { body }) => {
    const match = lookup(body);
    if (match.kind === 'one' && match.value === false)
      return { kind: 'stop', reason: 'hasMoreFalse', detail: `page ${pageNo} says no more pages follow ("${path}" is false)` };
    if (match.kind === 'one' && match.value === true) return undefined;
    const found =
      match.kind === 'none'
        ? 'finds nothing'
        : match.kind === 'many'
          ? `finds ${match.count} values`
          : `points to ${describeJsonType(match.value)}`;
    return { kind: 'fail', error: `Has More JSON Path "${path}" ${found} on page ${pageNo}; it must name one true or false value` };
  };
}

function totalCheck(path: string): StopCheck {
  const lookup = compileLookup(path);
  return (pageNo, { body }, recordsSoFar) => {
    const match = lookup(body);
    const total = match.kind === 'one' ? match.value : undefined;
    if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) {
      const found =
        match.kind === 'one'
          ? `points to ${describeJsonType(match.value)}`
          : match.kind === 'none'
            ? 'finds nothing'
            : `finds ${match.count} values`;
      return { kind: 'fail', error: `Total Count JSON Path "${path}" ${found} on page ${pageNo}; it must name one whole number` };
    }
    if (recordsSoFar === null)
      return {
        kind: 'fail',
        error: `Total Count JSON Path "${path}" needs records to count, but page ${pageNo} has no record array at Response Data Path`,
      };
    if (recordsSoFar >= total)
      return {
        kind: 'stop',
        reason: 'totalReached',
        detail: `the records fetched (${recordsSoFar}) reach the total of ${total} ("${path}") on page ${pageNo}`,
      };
    return undefined;
  };
}

const emptyCheck: StopCheck = (pageNo, { records }) =>
  records !== null && records.length === 0
    ? { kind: 'stop', reason: 'emptyPage', detail: `page ${pageNo} has no records: the last page` }
    : undefined;

/** The checks the settings ask for, in one function; undefined when none is set. */
export function stopConditions(settings: AnySettings): StopCheck | undefined {
  const { hasMorePath, totalCountPath, stopOnEmptyPage } = settings as AnySettings & StopConditionValues;
  const checks: StopCheck[] = [];
  if (stopOnEmptyPage === true) checks.push(emptyCheck);
  if (hasMorePath !== undefined && hasMorePath !== null && hasMorePath !== '') checks.push(hasMoreCheck(hasMorePath));
  if (totalCountPath !== undefined && totalCountPath !== null && totalCountPath !== '') checks.push(totalCheck(totalCountPath));
  if (checks.length === 0) return undefined;
  return (pageNo, response, recordsSoFar) => {
    for (const check of checks) {
      const step = check(pageNo, response, recordsSoFar);
      if (step !== undefined) return step;
    }
    return undefined;
  };
}
