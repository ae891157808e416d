/**
 * "Preview first page": what page 1 of an endpoint looks like to a run. The page is fetched with the
 * run's request path, its records are found exactly as a run finds them (page-records.ts: the
 * integration's records path, else Response Data Path, else the root), the first few go through the
 * integration's mapping and validation (mapped rows, or each record's errors in a bulk import's
 * words), and the paginator says what it would do next. Nothing is written.
 */
import { sql } from 'kysely';
import { AppError } from '../core/errors.js';
import { getIntegrationPlan } from '../integrations/store.js';
import type { SqlValue } from '../mapping/convert.js';
import { compileMapping, mapRecord, type CompiledMapping, type RelationExists } from '../mapping/engine.js';
import { recordError } from '../mapping/messages.js';
import type { StopReason } from '../pagination/types.js';
import type { Database } from '../storage/database.js';
import type { FieldRelation } from '../tables/model.js';
import { getTableWithRelations } from '../tables/store.js';
import { fetchJsonPage, pageError, pageResponse, paginatorFor, withSession, type FetchOptions } from './fetch-pages.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { findRecords } from './page-records.js';
import { redactText, redactUrl } from './redact.js';

/** What pagination would do after page 1. */
export type PreviewNext =
  | { readonly kind: 'next'; readonly url: string; readonly warning?: string }
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly detail: string; readonly warning?: string }
  | { readonly kind: 'fail'; readonly error: string };

/** One of the first records as the integration would take it: its row (target field → value), or its errors. */
export type PreviewRow =
  | { readonly recordNo: number; readonly row: Readonly<Record<string, SqlValue>> }
  | { readonly recordNo: number; readonly errors: readonly string[] };

export interface PagePreview {
  /** The URL of page 1 as sent, secrets redacted. */
  readonly url: string;
  readonly status: number;
  /** Which setting found the records (page-records.ts `foundBy`). */
  readonly recordsFoundBy: string;
  /** The records page 1 holds, as a run would import them. */
  readonly recordCount: number;
  /** The first PREVIEW_RECORDS records. */
  readonly records: readonly unknown[];
  /** Those records through the integration; absent when no integration was given or it cannot run (`integrationError`). */
  readonly rows?: readonly PreviewRow[];
  /** Why the integration cannot run (the message a run fails with at its start). */
  readonly integrationError?: string;
  readonly next: PreviewNext;
}

export const PREVIEW_RECORDS = 5;

/** The integration the preview maps records with. */
export interface PreviewIntegration {
  /** Where the records are in a page ('' blank); page-records.ts. */
  readonly recordsPath: string;
  /** Compiled against its target table, or the message a run would fail with at its start. */
  readonly mapping: CompiledMapping | { readonly error: string };
  /** Whether `value` is a key of the related table: read, never written. */
  readonly relationExists: (relation: FieldRelation, value: string | number) => Promise<boolean>;
}

/** Relations asked of the database as the importers ask them: the related field equal to the value. */
function relationLookup(db: Database): PreviewIntegration['relationExists'] {
  return async (relation, value) => {
    // PostgreSQL text cannot hold NUL, and asking for it fails the query: such a key cannot exist.
    if (typeof value === 'string' && value.includes('\u0000')) return false;
    const found = await sql<{
      present: number;
    }>`select 1 as present from ${sql.id(relation.table)} where ${sql.id(relation.field)} = ${value} limit 1`.execute(db.kysely);
    return found.rows.length > 0;
  };
}

/** The integration with that Sorting Order as a preview uses it; undefined when there is none. */
export async function loadPreviewIntegration(db: Database, sortingOrder: number): Promise<PreviewIntegration | undefined> {
  const plan = await getIntegrationPlan(db.kysely, sortingOrder);
  if (plan === undefined) return undefined;
  const tables = await getTableWithRelations(db.kysely, plan.integration.targetTable);
  let mapping: PreviewIntegration['mapping'];
  try {
    mapping = compileMapping(plan, tables);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    mapping = { error: err.message };
  }
  return { recordsPath: plan.integration.recordsPath, mapping, relationExists: relationLookup(db) };
}

/**
 * The records mapped as the importers map them. mapRecord asks relations synchronously, so the records
 * are mapped twice: once to learn which related keys they name (answered from the database in
 * between), once for the result.
 */
async function mapSample(mapping: CompiledMapping, integration: PreviewIntegration, records: readonly unknown[]): Promise<PreviewRow[]> {
  const { columns } = mapping;
  const row = new Array<SqlValue>(columns.length).fill(null);
  const asked = new Map<string, { column: number; value: string | number; exists: boolean }>();
  const keyOf = (column: number, value: string | number): string => `${column}\u0000${typeof value}\u0000${value}`;
  const collect: RelationExists = (column, value) => {
    asked.set(keyOf(column, value), { column, value, exists: true });
    return true;
  };
  for (const record of records) mapRecord(mapping, record, row, collect);
  for (const question of asked.values()) {
    question.exists = await integration.relationExists(columns[question.column]!.relation!, question.value);
  }
  const answer: RelationExists = (column, value) => asked.get(keyOf(column, value))?.exists ?? true;
  return records.map((record, i): PreviewRow => {
    const recordNo = i + 1;
    const violations = mapRecord(mapping, record, row, answer);
    if (violations !== null) return { recordNo, errors: violations.map((v) => recordError(recordNo, v.field, v.value, v.rule).message) };
    return { recordNo, row: Object.fromEntries(columns.map((c, n) => [c.field.name, row[n]!])) };
  });
}

/**
 * Fetches page 1 only and reports what a run would make of it; throws FetchError when page 1 fails,
 * also when its records are not where the settings say (a run fails on that page the same way).
 * `integration`: the endpoint's; undefined for an unsaved endpoint that names none (the records path
 * then counts as blank, and no rows are shown).
 */
export function previewFirstPage(
  connection: RestConnection,
  endpoint: RestEndpoint,
  integration: PreviewIntegration | undefined,
  options: FetchOptions = {},
): Promise<PagePreview> {
  return withSession(connection, options, async (session) => {
    const { paginator, locator } = paginatorFor(session, endpoint, integration?.recordsPath ?? '');
    const page = await fetchJsonPage(session, endpoint, paginator.first);
    const found = findRecords(locator, page.body);
    const step = paginator.next(paginator.first, pageResponse(locator, page.body, found));
    const { records } = found;
    if (records === null) throw pageError(session, 1, endpoint.method, page.shownUrl, locator.imported.explain(page.body), page.status);
    const secrets = session.auth.secrets();
    let next: PreviewNext;
    switch (step.kind) {
      case 'next':
        next = {
          kind: 'next',
          url: redactUrl(step.request.url, secrets.params),
          ...(step.warning === undefined ? {} : { warning: step.warning }),
        };
        break;
      case 'stop':
        next = step;
        break;
      case 'fail':
        next = { kind: 'fail', error: redactText(step.error, secrets) };
        break;
      default: {
        const unexpected: never = step;
        throw new Error(`unknown step ${JSON.stringify(unexpected)}`);
      }
    }
    const sample = records.slice(0, PREVIEW_RECORDS);
    let mapped: Pick<PagePreview, 'rows' | 'integrationError'> = {};
    if (integration !== undefined) {
      const { mapping } = integration;
      mapped = 'error' in mapping ? { integrationError: mapping.error } : { rows: await mapSample(mapping, integration, sample) };
    }
    return {
      url: page.shownUrl,
      status: page.status,
      recordsFoundBy: locator.foundBy,
      recordCount: records.length,
      records: sample,
      ...mapped,
      next,
    };
  });
}
