/**
 * "Create table and mappings from a sample": a pasted payload, the previewed first page of a saved
 * REST endpoint, or the first page of an endpoint not saved yet (the New endpoint form's button)
 * becomes a proposal (infer.ts) shown as a form; "Create" saves the table, the integration with its
 * fields and mappings, and the endpoint when there is one, all or nothing (create.ts). A refusal is
 * shown under the input it is about, and nothing typed is lost.
 */
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { AppError } from '../core/errors.js';
import { parseJsonExact } from '../core/exact-json.js';
import { FormBody, FormCheckbox, FormText, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { control, field, formError, table, type Input } from '../console/widgets.js';
import { WRITE_MODES } from '../integrations/model.js';
import { listIntegrations } from '../integrations/store.js';
import type { RestPagesDeps } from '../rest-source/connection-pages.js';
import { inputFrom } from '../rest-source/endpoint-form.js';
import { FetchError } from '../rest-source/fetch-pages.js';
import { previewFirstPage, type PagePreview } from '../rest-source/preview.js';
import { EndpointSchema } from '../rest-source/schemas.js';
import { resolveUnsavedEndpoint } from '../rest-source/unsaved.js';
import { listTargetTables } from '../tables/store.js';
import { createFromSample, type SampleEndpoint } from './create.js';
import { declarationsOf } from './declarations.js';
import {
  choiceOf,
  draftFrom,
  draftOf,
  LABELS,
  OFFERED_TYPES,
  problemInWords,
  problemOf,
  type Draft,
  type Problem,
  type Row,
} from './draft.js';
import { proposeFromSample, type Proposal } from './infer.js';

/** As large as "Try a payload" takes: a pasted payload is larger than the console's other forms. */
const PASTED_PAYLOAD_BYTES = 16 * 1024 * 1024;
const BASE = '/integrations/from-sample';
const TITLE = 'Create table and mappings from a sample';

const PasteBody = FormBody({ payload: FormText(PASTED_PAYLOAD_BYTES), endpointCode: Type.Optional(FormText(100)) });
const CreateBody = FormBody(
  {
    tableName: FormText(),
    sortingOrder: FormText(),
    integrationName: FormText(),
    integrationType: FormText(),
    recordsPath: FormText(),
    writeMode: FormText(),
    acceptBulkImportRequests: FormCheckbox,
    endpoint: Type.Optional(FormText(64 * 1024)),
    endpointCode: Type.Optional(FormText(100)),
    feedEndpoint: FormCheckbox,
  },
  { pattern: '^field\\.\\d{1,4}\\.[a-zA-Z]+$', value: FormText() },
);
/** The New endpoint form as it is, whatever pagination settings it shows. */
const EndpointFormBody = FormBody({}, { pattern: '^[A-Za-z]{1,64}$', value: FormText(64 * 1024) });

/** The New endpoint form's settings as the proposal form carries them: an endpoint without its integration. */
const CarriedEndpoint = Type.Omit(EndpointSchema, ['integrationSortingOrder']);

function endpointCarried(json: string): Static<typeof CarriedEndpoint> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  if (!Value.Check(CarriedEndpoint, value))
    throw new AppError(400, 'invalidRequest', 'The endpoint this form carries is not one; start again from the New endpoint form.');
  return value;
}

/** Where the sample came from, when it was an endpoint: carried through the form to "Create". */
type Source =
  | { readonly kind: 'paste' }
  | { readonly kind: 'new'; readonly code: string; readonly json: string }
  | { readonly kind: 'saved'; readonly code: string; readonly feed: boolean };

interface Shown {
  readonly recordCount?: number;
  readonly notes?: readonly string[];
  readonly preview?: PagePreview;
}

const words = (name: string): string => name.replace(/_+/g, ' ').replace(/^./, (c) => c.toUpperCase());

function pasteForm(ctx: ConsoleContext, payload: string, error?: string, endpointCode?: string): Html {
  return html`<form method="post" action="${BASE}">
    <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
    ${endpointCode === undefined ? '' : html`<input type="hidden" name="endpointCode" value="${endpointCode}" />`}
    ${field({
      kind: 'textarea',
      name: 'payload',
      label: 'Sample payload (JSON)',
      value: payload,
      rows: 8,
      required: true,
      help: 'A payload as callers send it, a bulk import request whole, or an API response: the records are found in it.',
      ...(error === undefined ? {} : { error, autofocus: true }),
    })}
    <button type="submit">Propose table and mappings</button> <span class="hint">Nothing is saved until you choose Create.</span>
  </form>`;
}

/** A control in a row of the fields table, named by its column and row, with its problem under it. */
function cell(input: Input, column: string, i: number, problem: Problem | undefined, first: boolean): Html {
  const id = `field-${i}-${column}`;
  const errorId = `${id}-error`;
  return html`${control(
    { ...input, id, ...(problem !== undefined && first ? { autofocus: true } : {}) },
    { ariaLabel: `${LABELS[column] ?? column} (row ${i + 1})`, ...(problem === undefined ? {} : { describedBy: errorId, invalid: true }) },
  )}${problem === undefined ? '' : html`<p class="field-error" id="${errorId}">${problem.text}</p>`}`;
}

function endpointPart(source: Source): Html | string {
  switch (source.kind) {
    case 'paste':
      return '';
    case 'new':
      return html`<fieldset>
        <legend>REST API endpoint</legend>
        <input type="hidden" name="endpoint" value="${source.json}" />
        <p>Create also saves the new endpoint <strong>${source.code}</strong>, importing through this integration.</p>
      </fieldset>`;
    case 'saved':
      return html`<fieldset>
        <legend>REST API endpoint</legend>
        <input type="hidden" name="endpointCode" value="${source.code}" />
        ${field({
          kind: 'checkbox',
          name: 'feedEndpoint',
          label: html`Import endpoint ${source.code} through this integration`,
          checked: source.feed,
          help: 'The endpoint is pointed at the new integration when it is created.',
        })}
      </fieldset>`;
    default: {
      const never: never = source;
      return never;
    }
  }
}

function previewPart(p: PagePreview | undefined): Html | string {
  if (p === undefined) return '';
  const next =
    p.next.kind === 'next'
      ? html`Pagination would request next: <code>${p.next.url}</code>`
      : p.next.kind === 'stop'
        ? html`Pagination would stop after this page (${p.next.reason}): ${p.next.detail}`
        : html`Pagination would fail: ${p.next.error}`;
  return html`<p role="status">
      ${p.recordCount} record${p.recordCount === 1 ? '' : 's'} on page 1 of <code>${p.url}</code> (HTTP ${p.status}); the first
      ${p.records.length} are the sample.
    </p>
    <p>${next}</p>`;
}

function proposalForm(ctx: ConsoleContext, draft: Draft, source: Source, shown: Shown, problems: readonly Problem[] = []): Html {
  const s = draft.settings;
  const first = problems[0];
  const problemAt = (setting: string) => problems.find((p) => p.setting === setting);
  const settingError = (setting: string) => {
    const p = problemAt(setting);
    return p === undefined ? {} : { error: p.text, ...(p === first ? { autofocus: true } : {}) };
  };
  const rowProblem = (i: number, column: string) => problems.find((p) => p.row === i && p.input === column);
  const c = (i: number, column: string, input: Input) => {
    const p = rowProblem(i, column);
    return cell(input, column, i, p, p !== undefined && p === first);
  };
  const banner = problems.length === 0 ? undefined : `Not created: ${problems.map(problemInWords).join(' · ')}`;
  return html`<section aria-labelledby="proposal-title">
    <h2 id="proposal-title">Proposal</h2>
    ${previewPart(shown.preview)}
    ${shown.recordCount === undefined ? '' : html`<p>${shown.recordCount} record${shown.recordCount === 1 ? '' : 's'} read from the sample.</p>`}
    ${
      (shown.notes ?? []).length === 0
        ? ''
        : html`<ul class="hint">
            ${(shown.notes ?? []).map((n) => html`<li>${n}</li>`)}
          </ul>`
    }
    ${formError(banner, 'create-error')}
    <form method="post" action="${BASE}/create" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      <input type="hidden" name="integrationType" value="${s.integrationType}" />
      <fieldset>
        <legend>Target table and integration</legend>
        ${field({ name: 'tableName', label: 'Table name', value: s.tableName, required: true, help: '1 to 63 lowercase letters, digits and "_", starting with a letter; also the SQL table\'s name.', ...settingError('tableName') })}
        ${field({ kind: 'number', name: 'sortingOrder', label: 'Sorting Order', value: s.sortingOrder, required: true, min: 1, help: 'Identifies the integration; bulk import callers send it as integrationSortingOrder.', ...settingError('sortingOrder') })}
        ${field({ name: 'integrationName', label: 'Integration name', value: s.integrationName, required: true, ...settingError('integrationName') })}
        ${field({ name: 'recordsPath', label: 'Records path', value: s.recordsPath, help: 'Where the records are in a payload. Blank: the payload itself is the array (for an endpoint: where its Response Data Path says).', ...settingError('recordsPath') })}
        ${field({ kind: 'select', name: 'writeMode', label: 'Write mode', options: WRITE_MODES, value: s.writeMode, help: 'insert: new rows only; update: existing rows by primary key; upsert: both.', ...settingError('writeMode') })}
        ${field({ kind: 'checkbox', name: 'acceptBulkImportRequests', label: 'Accept Bulk Import Requests', checked: s.acceptBulkImportRequests === 'on', help: 'When on, callers may submit payloads for this integration at once.', ...settingError('acceptBulkImportRequests') })}
      </fieldset>
      ${endpointPart(source)}
      <h3>Fields</h3>
      <p class="hint">
        One row per value the records hold: a field of the table, an integration field reading its source path, and the mapping between
        them.
      </p>
      ${table<Row>({
        caption: 'Proposed fields',
        rows: draft.rows,
        columns: [
          {
            header: 'Include',
            cell: (r, i) => c(i, 'include', { kind: 'checkbox', name: `field.${i}.include`, checked: r.include === 'on' }),
          },
          { header: 'Name', cell: (r, i) => c(i, 'name', { name: `field.${i}.name`, value: r.name, size: 18 }) },
          {
            header: 'Type',
            cell: (r, i) => c(i, 'type', { kind: 'select', name: `field.${i}.type`, options: OFFERED_TYPES, value: r.type }),
          },
          {
            header: 'Length',
            cell: (r, i) => c(i, 'maxLength', { kind: 'number', name: `field.${i}.maxLength`, value: r.maxLength, min: 1, size: 5 }),
          },
          {
            header: 'Required',
            cell: (r, i) => c(i, 'required', { kind: 'checkbox', name: `field.${i}.required`, checked: r.required === 'on' }),
          },
          {
            header: 'Primary key',
            cell: (r, i) => c(i, 'primaryKey', { kind: 'checkbox', name: `field.${i}.primaryKey`, checked: r.primaryKey === 'on' }),
          },
          { header: 'Source path', cell: (r, i) => c(i, 'sourcePath', { name: `field.${i}.sourcePath`, value: r.sourcePath, size: 18 }) },
          {
            header: 'Example',
            cell: (r, i) =>
              html`<input type="hidden" name="field.${i}.example" value="${r.example}" /><span class="muted">${r.example}</span>`,
          },
        ],
      })}
      <p>
        <button type="submit">Create</button>
        <span class="hint">Saves the table, the integration, its fields and mappings together, or nothing.</span>
      </p>
    </form>
  </section>`;
}

export function fromSamplePages(deps: RestPagesDeps): ConsolePages {
  const { db, clock, secrets } = deps;

  async function proposalOf(sample: unknown, hint: string | undefined): Promise<Proposal | { error: string }> {
    const takenTables = new Set((await listTargetTables(db)).map((t) => t.name));
    return proposeFromSample(sample, { takenTables, ...(hint === undefined ? {} : { hint }) });
  }

  async function nextSortingOrder(): Promise<string> {
    const integrations = await listIntegrations(db);
    return String(integrations.reduce((max, i) => Math.max(max, i.sortingOrder), 0) + 1);
  }

  const page = (ctx: ConsoleContext, body: Html) =>
    ctx.page(
      TITLE,
      html`<p><a href="/integrations">← Integrations</a></p>
        ${body}`,
    );

  return (router) => {
    router.get(BASE, 'configure', (_request, ctx) => Promise.resolve(page(ctx, pasteForm(ctx, ''))));

    router.post(
      BASE,
      'configure',
      async (request, ctx) => {
        const { payload, endpointCode } = request.body;
        let sample: unknown;
        try {
          sample = parseJsonExact(payload);
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          return page(ctx, pasteForm(ctx, payload, `The sample is not valid JSON: ${reason}`, endpointCode));
        }
        const proposal = await proposalOf(sample, endpointCode);
        if ('error' in proposal) return page(ctx, pasteForm(ctx, payload, proposal.error, endpointCode));
        const from = endpointCode === undefined || endpointCode === proposal.tableName ? '' : ` from ${endpointCode}`;
        const draft = draftOf(proposal, {
          sortingOrder: await nextSortingOrder(),
          integrationName: `${words(proposal.tableName)}${from}`,
          integrationType: endpointCode === undefined ? 'file' : 'restApi',
        });
        const source: Source = endpointCode === undefined ? { kind: 'paste' } : { kind: 'saved', code: endpointCode, feed: true };
        return page(
          ctx,
          html`${pasteForm(ctx, payload, undefined, endpointCode)}
          ${proposalForm(ctx, draft, source, { recordCount: proposal.recordCount, notes: proposal.notes })}`,
        );
      },
      { body: PasteBody, bodyLimit: PASTED_PAYLOAD_BYTES },
    );

    router.post(
      `${BASE}/endpoint`,
      'configureRest',
      async (_request, ctx, form) => {
        if (!ctx.can('configure'))
          throw new AppError(403, 'forbidden', 'Creating a table and an integration needs the permission to configure integrations.');
        const code = (form.get('code') ?? '').trim();
        const { integrationSortingOrder: _none, ...input } = inputFrom(form, code);
        const back = html`<p>
          <a href="${path(['rest', 'endpoints', 'new'], { connection: input.connectionCode })}">← New REST API endpoint</a>
        </p>`;
        let preview: PagePreview;
        try {
          const { connection, endpoint } = await resolveUnsavedEndpoint(db, input, secrets);
          preview = await previewFirstPage(connection, endpoint, undefined, { outbound: deps.outbound });
        } catch (err) {
          const message =
            err instanceof FetchError
              ? `Page ${err.pageNo} failed: ${err.message}`
              : err instanceof AppError && err.status < 500
                ? `The endpoint's settings are refused: ${err.message}`
                : undefined;
          if (message === undefined) throw err;
          return ctx.page(
            TITLE,
            html`${back}${formError(message)}
              <p>Go back to the endpoint's form (your browser's Back keeps what you typed), correct it and try again.</p>`,
          );
        }
        const proposal = await proposalOf(preview.records, code);
        if ('error' in proposal) return ctx.page(TITLE, html`${back}${previewPart(preview)}${formError(proposal.error)}`);
        const draft = draftOf(proposal, {
          sortingOrder: await nextSortingOrder(),
          integrationName: proposal.tableName === code ? words(code) : `${words(proposal.tableName)} from ${code}`,
          integrationType: 'restApi',
        });
        return ctx.page(
          TITLE,
          html`${back}${proposalForm(ctx, draft, { kind: 'new', code, json: JSON.stringify(input) }, { notes: proposal.notes, preview })}`,
        );
      },
      { body: EndpointFormBody },
    );

    router.post(
      `${BASE}/create`,
      'configure',
      async (request, ctx, form) => {
        const draft = draftFrom(form);
        const body = request.body;
        let source: Source = { kind: 'paste' };
        let endpoint: SampleEndpoint | undefined;
        if (body.endpoint !== undefined) {
          if (!ctx.can('configureRest'))
            throw new AppError(403, 'forbidden', 'Saving a REST API endpoint needs the permission to configure REST APIs.');
          const input = endpointCarried(body.endpoint);
          source = { kind: 'new', code: input.code, json: body.endpoint };
          endpoint = { kind: 'new', input };
        } else if (body.endpointCode !== undefined) {
          source = { kind: 'saved', code: body.endpointCode, feed: body.feedEndpoint === 'on' };
          if (body.feedEndpoint === 'on') {
            if (!ctx.can('configureRest'))
              throw new AppError(403, 'forbidden', 'Changing a REST API endpoint needs the permission to configure REST APIs.');
            endpoint = { kind: 'saved', code: body.endpointCode };
          }
        }
        const again = (problems: readonly Problem[]) => page(ctx, proposalForm(ctx, draft, source, {}, problems));
        const choice = choiceOf(draft);
        if (Array.isArray(choice)) return again(choice);
        const declarations = declarationsOf(choice);
        try {
          await createFromSample(db, declarations, clock, endpoint);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          return again([problemOf(err.message, declarations.rows, draft)]);
        }
        const { table: t, integration } = declarations;
        const created = `Table ${t.name} and integration ${integration.sortingOrder} with ${integration.fields.length} field${integration.fields.length === 1 ? '' : 's'} and mappings were created`;
        if (endpoint !== undefined) {
          const code = endpoint.kind === 'new' ? endpoint.input.code : endpoint.code;
          return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: `${created}; endpoint ${code} imports through it.` });
        }
        return redirect(path(['integrations', integration.sortingOrder]), { kind: 'info', text: `${created}.` });
      },
      { body: CreateBody },
    );
  };
}
