/** From a payload's JSON text to its record array, or the payload-level error that stops the import. */
import { parseJsonExact } from '../core/exact-json.js';
import { payloadError, type RecordError } from './messages.js';
import type { PathGetter } from '../json-path/paths.js';

export function extractRecords(payload: string, recordsPath: string, getRecords: PathGetter): unknown[] | RecordError {
  let root: unknown;
  try {
    root = parseJsonExact(payload);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return payloadError('is not valid JSON', `payload is not valid JSON: ${reason}`);
  }
  const records = getRecords(root);
  if (Array.isArray(records)) return records as unknown[];
  return recordsPath === ''
    ? payloadError('is not an array', "payload: the root is not an array (set the integration's records path)")
    : payloadError('is not an array', `payload: records path "${recordsPath}" does not point to an array`);
}
