/**
 * Source paths that find nothing in any of the records tried: a typo (`contact.emial`) otherwise only
 * shows as an empty value. Each warning names the path and the keys the records do have where the path
 * stops matching, so that the person can see the right spelling at once.
 */
import type { IntegrationPlan } from '../integrations/model.js';
import { compilePath, parsePath, type PathSegment } from '../json-path/paths.js';

const MAX_LISTED_KEYS = 12;
const PLAIN_NAME = /^[A-Za-z_@$][\w@$-]*$/;

/** The segments as a dot path a person would type (`contact.email`, `lines.0.qty`, `["odd key"].x`). */
function pathText(segments: readonly PathSegment[]): string {
  let text = '';
  for (const s of segments) {
    if (s.kind === 'index') text += text === '' ? String(s.index) : `.${s.index}`;
    else if (PLAIN_NAME.test(s.name)) text += text === '' ? s.name : `.${s.name}`;
    else text += `${text === '' ? '$' : ''}[${JSON.stringify(s.name)}]`;
  }
  return text;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at `segments` in `value`, as compilePath reads it (undefined when a step is missing). */
function walk(segments: readonly PathSegment[], value: unknown): unknown {
  let at = value;
  for (const s of segments) {
    if (typeof at !== 'object' || at === null) return undefined;
    const key = s.kind === 'index' ? String(s.index) : s.name;
    if (Array.isArray(at) ? s.kind !== 'index' : !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * The keys the records have at the deepest prefix of `segments` that finds an object in some record
 * (the records themselves when no prefix does), as full paths: `contact.email, contact.name`.
 */
function keysNear(segments: readonly PathSegment[], records: readonly unknown[]): string[] {
  for (let depth = segments.length - 1; depth >= 0; depth--) {
    const prefix = segments.slice(0, depth);
    const keys = new Set<string>();
    for (const record of records) {
      const value = walk(prefix, record);
      if (isObject(value)) for (const key of Object.keys(value)) keys.add(key);
    }
    if (keys.size > 0) return [...keys].map((key) => pathText([...prefix, { kind: 'name', name: key }]));
  }
  return [];
}

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, MAX_LISTED_KEYS);
  return paths.length > MAX_LISTED_KEYS ? `${shown.join(', ')}, … ${paths.length - MAX_LISTED_KEYS} more` : shown.join(', ');
}

/**
 * One warning per mapped source path that finds no value in any of `records`: `Source path
 * "contact.emial" (field "email") matches nothing in the 3 records; they have contact.email, contact.name`.
 * Nothing when there are no records (there is nothing to match) or a path does not compile (the
 * integration's own check reports that).
 */
export function unmatchedSourcePaths(plan: IntegrationPlan, records: readonly unknown[]): string[] {
  if (records.length === 0) return [];
  const warnings: string[] = [];
  const fields = new Map(plan.fields.map((f) => [f.fieldNo, f]));
  for (const mapping of [...plan.mappings].sort((a, b) => a.fieldNo - b.fieldNo)) {
    const field = fields.get(mapping.fieldNo);
    if (field === undefined || field.columnType !== 'standard') continue;
    let segments: PathSegment[];
    let get: (record: unknown) => unknown;
    try {
      segments = parsePath(field.sourcePath);
      get = compilePath(field.sourcePath);
    } catch {
      continue;
    }
    if (records.some((record) => get(record) !== undefined)) continue;
    const n = records.length;
    const where = n === 1 ? 'the record' : `the ${n} records`;
    const keys = keysNear(segments, records);
    const have = keys.length === 0 ? '' : `; ${n === 1 ? 'it has' : 'they have'} ${listed(keys)}`;
    warnings.push(`Source path "${field.sourcePath}" (field "${mapping.targetField}") matches nothing in ${where}${have}.`);
  }
  return warnings;
}
