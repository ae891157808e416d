/**
 * What the REST API connection and endpoint routes answer (routes.ts): the two entity sets, whose
 * item schemas list no secret property (so none can slip out), the probe answers, and the small
 * helpers that shape them. `restApiEndpoints` is also where import-runs binds its `run` action.
 */
import { Type } from 'typebox';
import { entitySet } from '../http/entity-set.js';
import { STOP_REASONS } from '../pagination/index.js';
import type { FetchOptions } from './fetch-pages.js';
import { FetchError } from './http-client.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { PaginationAnswers } from './pagination-fields.js';
import { previewFirstPage, type PagePreview, type PreviewIntegration } from './preview.js';
import type { EndpointView } from './settings.js';
import type { EndpointBookmark } from './cursor-values.js';
import { Integer } from '../http/schemas.js';

export const tags = ['REST API'];

export const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
export const StringMap = Type.Record(Type.String(), Type.String());

export const restApiConnections = entitySet({
  name: 'restApiConnections',
  key: 'code',
  keyType: 'string',
  noun: 'REST API connection',
  item: Type.Object({
    code: Type.String(),
    baseUrl: Type.String(),
    authType: Type.String(),
    username: nullable(Type.String()),
    passwordIsSet: Type.Boolean(),
    tokenIsSet: Type.Boolean(),
    apiKeyName: nullable(Type.String()),
    apiKeyIn: nullable(Type.String()),
    apiKeyIsSet: Type.Boolean(),
    tokenUrl: nullable(Type.String()),
    clientId: nullable(Type.String()),
    clientSecretIsSet: Type.Boolean(),
    scope: nullable(Type.String()),
    headers: StringMap,
    queryParameters: StringMap,
    timeoutMs: Integer(),
    maxRetries: Integer(),
    initialDelayMs: Integer(),
  }),
});
/**
 * A connection or endpoint as answers show it: its query parameters named `queryParameters` (`query`
 * would be a property of the same name as the query method of generated OData clients).
 */
export const answered = <T extends { readonly query: Readonly<Record<string, string>> }>({
  query,
  ...rest
}: T): Omit<T, 'query'> & { queryParameters: Record<string, string> } => ({ ...rest, queryParameters: { ...query } });

export const RECORDS_FOUND_BY =
  "Read-only, ignored on input: which setting finds a page's records (the integration's records path, else Response Data Path, else the response root) and why that one";
const CURSOR_VALUE =
  'Read-only, ignored on input: the bookmark, the highest cursorField value the Completed runs imported (date-times as ISO 8601 UTC); null: none yet, {{cursor}} sends cursorFieldInitialValue. Changed by Microsoft.NAV.setCursor and resetCursor';
const CURSOR_UPDATED_AT = 'Read-only, ignored on input: when the bookmark last changed (a Completed run, a set or a reset)';
const LAST_SUCCESS =
  'Read-only, ignored on input: when the last Completed run started, what {{lastSuccessfulRun.startedAt}} sends; null: no Completed run yet (it then sends 1970-01-01T00:00:00Z)';
/** An answer may be sent back as it is (GET, change, PATCH): its read-only properties are accepted there and ignored. */
export const ReadOnlyIn = {
  recordsFoundBy: Type.Optional(Type.String({ description: RECORDS_FOUND_BY })),
  cursorValue: Type.Optional(nullable(Type.String({ description: CURSOR_VALUE }))),
  cursorUpdatedAt: Type.Optional(nullable(Type.String({ description: CURSOR_UPDATED_AT }))),
  lastSuccessfulRunStartedAt: Type.Optional(nullable(Type.String({ description: LAST_SUCCESS }))),
};
export const withoutReadOnly = <T extends { recordsFoundBy?: string }>({
  recordsFoundBy: _ignored,
  cursorValue: _value,
  cursorUpdatedAt: _updated,
  lastSuccessfulRunStartedAt: _success,
  ...input
}: T & { cursorValue?: unknown; cursorUpdatedAt?: unknown; lastSuccessfulRunStartedAt?: unknown }): Omit<
  T,
  'recordsFoundBy' | 'cursorValue' | 'cursorUpdatedAt' | 'lastSuccessfulRunStartedAt'
> => input;
export type EndpointAnswer = Omit<EndpointView, 'query'> &
  EndpointBookmark & {
    readonly queryParameters: Record<string, string>;
    readonly recordsFoundBy: string;
  };

export const restApiEndpoints = entitySet({
  name: 'restApiEndpoints',
  key: 'code',
  keyType: 'string',
  noun: 'REST API endpoint',
  item: Type.Object({
    code: Type.String(),
    connectionCode: Type.String(),
    path: Type.String(),
    method: Type.String(),
    headers: StringMap,
    queryParameters: StringMap,
    body: nullable(Type.String()),
    integrationSortingOrder: Integer(),
    paginationType: Type.String(),
    ...PaginationAnswers.texts,
    pageSize: nullable(Integer()),
    maxPages: Integer(),
    responseDataPath: nullable(Type.String({ description: 'As configured: null when not set, "" or "$" when blank' })),
    ...PaginationAnswers.switches,
    scheduleSeconds: nullable(Integer()),
    responseActions: Type.Array(Type.Object({ status: Integer(), action: Type.String() })),
    sessionCookies: Type.Boolean(),
    cursorField: nullable(Type.String()),
    cursorFieldType: nullable(Type.String()),
    cursorFieldInitialValue: nullable(Type.String()),
    cursorFieldLookback: nullable(Type.String()),
    cursorValue: nullable(Type.String({ description: CURSOR_VALUE })),
    cursorUpdatedAt: nullable(Type.String({ description: CURSOR_UPDATED_AT })),
    lastSuccessfulRunStartedAt: nullable(Type.String({ description: LAST_SUCCESS })),
    recordsFoundBy: Type.String({ description: RECORDS_FOUND_BY }),
  }),
});

export const ProbeError = Type.Object({
  pageNo: Integer(),
  url: Type.String(),
  message: Type.String(),
  status: nullable(Integer()),
});
export const TestConnectionAnswer = Type.Object({
  ok: Type.Boolean(),
  status: Type.Optional(nullable(Integer())),
  url: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  error: Type.Optional(ProbeError),
});
export const PreviewNext = Type.Object(
  {
    kind: Type.String({ description: 'next, stop or fail' }),
    url: Type.Optional(Type.String({ description: 'next: the URL of page 2, secrets redacted' })),
    cursor: Type.Optional(Type.String({ description: 'next, Cursor pagination: the cursor page 2 would be requested with' })),
    reason: Type.Optional(Type.String({ description: `stop: one of ${STOP_REASONS.join(', ')}` })),
    detail: Type.Optional(Type.String()),
    warning: Type.Optional(Type.String()),
    error: Type.Optional(Type.String({ description: 'fail: why a run would fail after page 1' })),
  },
  { description: 'What pagination would do after page 1' },
);
export const PreviewRow = Type.Object({
  recordNo: Integer(),
  row: Type.Optional(
    Type.Record(Type.String(), nullable(Type.Union([Type.String(), Type.Number()])), {
      description: 'The row the integration would write: target field → value',
    }),
  ),
  errors: Type.Optional(Type.Array(Type.String(), { description: "The record's errors, worded as a bulk import words them" })),
});
export const PreviewOutcome = Type.Object(
  {
    status: Type.String({ description: 'Completed or Failed: how a run importing these records would end' }),
    recordCount: Integer({ description: 'Records that would be written (inserted + updated); 0 when it would fail' }),
    inserted: Integer(),
    updated: Integer(),
    skipped: Integer({ description: "Records that would be left out for an error (the integration's onRecordError skip)" }),
    errorCount: Integer(),
    errorMessage: Type.String({ description: "The run's errorMessage, word for word; '' when there is no error" }),
    errors: Type.Array(Type.Object({ recordNo: nullable(Integer()), message: Type.String() }), {
      description: 'Every error, in record order, as the run words it (record N (page 1, record N): …)',
    }),
  },
  {
    description:
      "What importing page 1's records would do under the integration's settings (write mode, On record error, relations, the rows already there): the real import, in a transaction that is rolled back",
  },
);
export const PreviewAnswer = Type.Object({
  ok: Type.Boolean(),
  url: Type.Optional(Type.String({ description: 'Page 1 as sent, secrets redacted' })),
  status: Type.Optional(Integer()),
  recordsFoundBy: Type.Optional(Type.String({ description: RECORDS_FOUND_BY })),
  recordCount: Type.Optional(Integer({ description: 'Records on page 1, found as a run finds them' })),
  records: Type.Optional(Type.Array(Type.Unknown(), { description: 'The first 5 records' })),
  rows: Type.Optional(
    Type.Array(PreviewRow, {
      description: "The first 5 records through the endpoint's integration: each its row, or its errors (nothing is written)",
    }),
  ),
  integrationError: Type.Optional(Type.String({ description: 'Why the integration cannot run: a run fails with this message' })),
  outcome: Type.Optional(PreviewOutcome),
  warnings: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Amber warnings with their likely fix: pagination that would stop after page 1 too early, source paths that match no record',
    }),
  ),
  next: Type.Optional(PreviewNext),
  error: Type.Optional(ProbeError),
});

/** The preview as the answer schema types it (mutable arrays). */
export const preview = async (
  connection: RestConnection,
  endpoint: RestEndpoint,
  integration: PreviewIntegration | undefined,
  options: FetchOptions,
) => {
  const { rows, outcome, ...page }: PagePreview = await previewFirstPage(connection, endpoint, integration, options);
  return {
    ...page,
    records: [...page.records],
    warnings: [...page.warnings],
    ...(outcome === undefined
      ? {}
      : {
          outcome: {
            status: outcome.ok ? 'Completed' : 'Failed',
            recordCount: outcome.recordCount,
            inserted: outcome.inserted,
            updated: outcome.updated,
            skipped: outcome.skipped,
            errorCount: outcome.errorCount,
            errorMessage: outcome.errorMessage,
            errors: outcome.errors.map((e) => ({ recordNo: e.recordNo, message: e.message })),
          },
        }),
    ...(rows === undefined ? {} : { rows: rows.map((r) => ('row' in r ? { ...r, row: { ...r.row } } : { ...r, errors: [...r.errors] })) }),
    next: { ...page.next },
  };
};

/** A remote failure is an answer, not an error: the probe itself worked. */
export async function probe<T extends object>(
  run: () => Promise<T>,
): Promise<(T & { ok: boolean }) | { ok: false; error: { pageNo: number; url: string; message: string; status: number | null } }> {
  try {
    const result = await run();
    return { ok: true, ...result };
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return { ok: false, error: { pageNo: err.pageNo, url: err.url, message: err.message, status: err.status } };
  }
}
