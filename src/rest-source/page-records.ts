/**
 * Where a page's records are. Two settings can say it: the integration's records path (where the
 * record array is in a payload, and so in a page) and the endpoint's Response Data Path (where
 * pagination counts records, spec 2.3). Blank means "not said" for both:
 *
 * | records path | Response Data Path | records imported from | records counted at   |
 * |--------------|--------------------|-----------------------|----------------------|
 * | set          | blank              | records path          | records path         |
 * | blank        | set                | Response Data Path    | Response Data Path   |
 * | set          | set                | records path          | Response Data Path   |
 * | blank        | blank              | the response root     | the response root    |
 *
 * A run (fetch-pages.ts, then import-runs) and the preview (preview.ts) find records only through
 * here, so what the preview shows is what the run imports. Each path is read by its own reader: the
 * records path as a bulk payload's (json-path/paths.ts), Response Data Path as pagination reads it
 * (json-path/lookup.ts).
 */
import { compileLookup, describeJsonType } from '../json-path/lookup.js';
import { compilePath } from '../json-path/paths.js';
import { explainNoRecords, listKeys, responseHint } from '../pagination/index.js';

/** One setting that finds a page's records. */
export interface RecordsSource {
  /** The setting, for messages: `the integration's records path "values"`, `Response Data Path "data"`, `the response root`. */
  readonly name: string;
  /** The record array in `body`, or null when there is none. */
  readonly find: (body: unknown) => readonly unknown[] | null;
  /** Why `find` found no array in `body`: a sentence a user can act on, naming the setting. */
  readonly explain: (body: unknown) => string;
}

export interface PageRecordsLocator {
  /** Where the records a run imports are. */
  readonly imported: RecordsSource;
  /** Where pagination counts records. */
  readonly counted: RecordsSource;
  /** Whether one setting serves both (a page is then read once). */
  readonly shared: boolean;
  /** Which setting finds the records, and why that one, as endpoint answers and the preview show it. */
  readonly foundBy: string;
}

const arrayOrNull = (value: unknown): readonly unknown[] | null => (Array.isArray(value) ? (value as readonly unknown[]) : null);

const recordsPathName = (recordsPath: string): string => `the integration's records path "${recordsPath}"`;
const responseDataPathName = (responseDataPath: string): string => `Response Data Path "${responseDataPath}"`;

function recordsPathSource(recordsPath: string): RecordsSource {
  const get = compilePath(recordsPath);
  const name = recordsPathName(recordsPath);
  return {
    name,
    find: (body) => arrayOrNull(get(body)),
    explain(body) {
      const value = get(body);
      return value === undefined
        ? `${name} finds nothing in the response${responseHint(body)}`
        : `${name} points to ${describeJsonType(value)}, not to the record array`;
    },
  };
}

function responseDataPathSource(responseDataPath: string): RecordsSource {
  const lookup = compileLookup(responseDataPath);
  return {
    name: responseDataPathName(responseDataPath),
    find(body) {
      const match = lookup(body);
      return match.kind === 'one' ? arrayOrNull(match.value) : null;
    },
    explain: (body) => explainNoRecords(body, responseDataPath),
  };
}

const ROOT: RecordsSource = {
  name: 'the response root',
  find: arrayOrNull,
  explain(body) {
    const what = typeof body === 'object' && body !== null ? `${describeJsonType(body)} with ${listKeys(body)}` : describeJsonType(body);
    return (
      `the integration's records path and the endpoint's Response Data Path are both blank, so the response root must be the ` +
      `record array, but it is ${what}; set either of them to the path of the records`
    );
  },
};

/**
 * Which setting finds the records, and why that one: the sentence endpoint answers and the preview
 * show. Paths as for pageRecordsLocator.
 */
export function recordsFoundBy(responseDataPath: string, recordsPath: string): string {
  if (recordsPath !== '') {
    return responseDataPath === ''
      ? `${recordsPathName(recordsPath)} (Response Data Path is blank)`
      : `${recordsPathName(recordsPath)}; ${responseDataPathName(responseDataPath)} counts them for pagination`;
  }
  return responseDataPath === ''
    ? "the response root (the integration's records path and Response Data Path are blank)"
    : `${responseDataPathName(responseDataPath)} (the integration's records path is blank)`;
}

/**
 * The locator for an endpoint's Response Data Path (as the engine reads it: '' is blank) and its
 * integration's records path ('' is blank). Throws AppError for a path that does not compile; both
 * are validated when they are saved.
 */
export function pageRecordsLocator(responseDataPath: string, recordsPath: string): PageRecordsLocator {
  const foundBy = recordsFoundBy(responseDataPath, recordsPath);
  if (recordsPath !== '') {
    const imported = recordsPathSource(recordsPath);
    if (responseDataPath === '') return { imported, counted: imported, shared: true, foundBy };
    return { imported, counted: responseDataPathSource(responseDataPath), shared: false, foundBy };
  }
  if (responseDataPath !== '') {
    const counted = responseDataPathSource(responseDataPath);
    // A run that finds no records there fails: it says why it read them there.
    const because = "; the records are read there because the integration's records path is blank";
    return { imported: { ...counted, explain: (body) => `${counted.explain(body)}${because}` }, counted, shared: true, foundBy };
  }
  return { imported: ROOT, counted: ROOT, shared: true, foundBy };
}

/** A page's records as a run imports them and as pagination counts them (found once when one setting serves both). */
export interface PageFindings {
  readonly records: readonly unknown[] | null;
  readonly counted: readonly unknown[] | null;
}

export function findRecords(locator: PageRecordsLocator, body: unknown): PageFindings {
  const records = locator.imported.find(body);
  return { records, counted: locator.shared ? records : locator.counted.find(body) };
}
