/**
 * The console's Integrations: the list, a new integration, and the card: its settings, the Bulk Import
 * section, and one row per field with its mapping, saved together under the API's rules and messages
 * (card-state.ts, card-page.ts). Both forms check themselves as they change with what Create or Save
 * would check, database included, and a refused form shows each error under its input.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import {
  FormBody,
  FormCheckbox,
  FormText,
  sortingOrderOf,
  PathKey,
  redirect,
  type ConsoleContext,
  type ConsolePages,
} from '../console/console.js';
import { formErrors, numberAt, placeError, type FormErrors, type FormPlaces } from '../console/form-errors.js';
import { html, path, type Html } from '../console/html.js';
import { field, formError, table } from '../console/widgets.js';
import type { Database } from '../storage/database.js';
import { listTargetTables } from '../tables/store.js';
import {
  addRow,
  cardPlaces,
  changeOf,
  removeRow,
  ROW_PATTERN,
  sentRows,
  stateOfForm,
  stateOfPlan,
  suggestTargets,
  type CardState,
} from './card-state.js';
import { integrationCard } from './card-page.js';
import { DEFAULT_INTEGRATION_TYPE, INTEGRATION_TYPES, ON_RECORD_ERROR, WRITE_MODES } from './model.js';
import {
  checkIntegrationChange,
  checkNewIntegration,
  createIntegration,
  updateIntegration,
  type IntegrationDeclaration,
} from './service.js';
import { getIntegrationPlan, listIntegrations } from './store.js';

export interface IntegrationPagesDeps {
  readonly db: Database;
  readonly clock: Clock;
}

const NoParams = { params: PathKey('no') };
const Choice = Type.Optional(FormText(100));

const NewBody = FormBody({
  sortingOrder: FormText(100),
  name: FormText(),
  targetTable: Choice,
  type: Choice,
  recordsPath: FormText(),
  writeMode: Choice,
  onRecordError: Choice,
});

/** The card: its settings, its rows (`row.<n>.<property>`), and which button sent it (Add a row, Remove). */
const CardBody = FormBody(
  {
    name: FormText(),
    type: FormText(100),
    recordsPath: FormText(),
    acceptBulkImportRequests: FormCheckbox,
    maxPayloadSizeKb: FormText(100),
    writeMode: FormText(100),
    onRecordError: FormText(100),
    add: Type.Optional(Type.Literal('row')),
    remove: Type.Optional(Type.String({ pattern: '^\\d{1,3}$' })),
  },
  { pattern: ROW_PATTERN, value: FormText() },
);

const NEW_PLACES: FormPlaces = {
  inputs: {
    sortingOrder: { name: 'sortingOrder', label: 'Sorting Order' },
    name: { name: 'name', label: 'Name' },
    targetTable: { name: 'targetTable', label: 'Target table' },
    type: { name: 'type', label: 'Type' },
    recordsPath: { name: 'recordsPath', label: 'Records path' },
    writeMode: { name: 'writeMode', label: 'Write mode' },
    onRecordError: { name: 'onRecordError', label: 'On record error' },
  },
};

/** What a form refused by the rules says: the error, else undefined; anything else is thrown on. */
async function refusal(attempt: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await attempt();
    return undefined;
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return err.message;
  }
}

/** The answer of a live check: valid, or the error in the form's words. */
const liveCheck = (error: string | undefined, places: FormPlaces): Html =>
  error === undefined
    ? html`<p class="ok">These settings are valid.</p>`
    : html`<p class="field-error" role="alert">${placeError(error, places).words}</p>`;

function declarationOf(form: URLSearchParams): IntegrationDeclaration {
  const sortingOrder = numberAt(form.get('sortingOrder') ?? '', 'sortingOrder');
  if (sortingOrder === null) throw new AppError(400, 'invalidRequest', 'sortingOrder: must not be empty');
  return {
    sortingOrder,
    name: form.get('name') ?? '',
    targetTable: form.get('targetTable') ?? '',
    recordsPath: form.get('recordsPath') ?? '',
    type: form.get('type') ?? DEFAULT_INTEGRATION_TYPE,
    writeMode: form.get('writeMode') ?? 'insert',
    onRecordError: form.get('onRecordError') ?? 'fail',
  };
}

function newForm(ctx: ConsoleContext, tables: readonly string[], values: Readonly<Record<string, string>>, errors: FormErrors): Html {
  const v = (name: string) => values[name] ?? '';
  const at = (name: string) => errors.on(name);
  return html`${formError(errors.summary === undefined ? undefined : `Not created: ${errors.summary}`)}
    <form
      method="post"
      action="/integrations/new"
      class="card-form"
      hx-post="/integrations/new/validate"
      hx-trigger="change delay:300ms"
      hx-target="#validation"
      hx-swap="innerHTML"
    >
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        kind: 'number',
        name: 'sortingOrder',
        label: 'Sorting Order',
        required: true,
        min: 1,
        value: v('sortingOrder'),
        help: 'Identifies the integration; bulk import callers send it as integrationSortingOrder. Proposed: the next free number.',
        ...at('sortingOrder'),
      })}
      ${field({ name: 'name', label: 'Name', required: true, value: v('name'), ...at('name') })}
      ${field({
        kind: 'select',
        name: 'targetTable',
        label: 'Target table',
        required: true,
        options: tables,
        value: v('targetTable'),
        help: tables.length === 0 ? 'No target table is declared yet: create one first.' : 'The table whose rows the records become.',
        ...at('targetTable'),
      })}
      ${field({
        name: 'recordsPath',
        label: 'Records path',
        value: v('recordsPath'),
        help: 'Blank: the payload itself is the array of records.',
        ...at('recordsPath'),
      })}
      ${field({
        kind: 'select',
        name: 'type',
        label: 'Type',
        options: INTEGRATION_TYPES,
        value: v('type') || DEFAULT_INTEGRATION_TYPE,
        help: 'A label: where the records come from.',
        ...at('type'),
      })}
      ${field({
        kind: 'select',
        name: 'writeMode',
        label: 'Write mode',
        options: WRITE_MODES,
        value: v('writeMode') || 'insert',
        help: 'insert: new rows only; update: existing rows by primary key; upsert: both.',
        ...at('writeMode'),
      })}
      ${field({
        kind: 'select',
        name: 'onRecordError',
        label: 'On record error',
        options: ON_RECORD_ERROR,
        value: v('onRecordError') || 'fail',
        help: 'fail: one bad record fails the whole request and nothing is written; skip: bad records are skipped and reported.',
        ...at('onRecordError'),
      })}
      <div id="validation" aria-live="polite"></div>
      <button type="submit">Create integration</button>
    </form>
    <p><a href="/integrations/from-sample">Create table and mappings from a sample</a></p>`;
}

export function integrationPages(deps: IntegrationPagesDeps): ConsolePages {
  const { db, clock } = deps;

  async function targetFieldsOf(table: string): Promise<string[]> {
    const tables = await listTargetTables(db.kysely);
    return tables.find((t) => t.name === table)?.fields.map((f) => f.name) ?? [];
  }

  async function loadPlan(raw: string) {
    const no = sortingOrderOf(raw);
    const plan = await getIntegrationPlan(db.kysely, no);
    if (plan === undefined) throw new AppError(404, 'notFound', `No integration ${no}.`);
    return { no, plan };
  }

  async function newPage(ctx: ConsoleContext, values: Readonly<Record<string, string>>, errors: FormErrors): Promise<Html> {
    const tables = (await listTargetTables(db.kysely)).map((t) => t.name);
    return ctx.page('New integration', newForm(ctx, tables, values, errors));
  }

  return (router) => {
    router.section({ label: 'Integrations', href: '/integrations', permission: 'read', order: 30 });

    router.get('/integrations', 'read', async (_request, ctx) => {
      const list = await listIntegrations(db.kysely);
      return ctx.page(
        'Integrations',
        html`${ctx.can('configure') ? html`<p><a class="button" href="/integrations/new">New integration</a></p>` : ''}
        ${table({
          rows: list,
          empty: 'No integrations yet.',
          columns: [
            { header: 'Sorting Order', numeric: true, cell: (i) => i.sortingOrder },
            { header: 'Name', cell: (i) => html`<a href="${path(['integrations', i.sortingOrder])}">${i.name}</a>` },
            { header: 'Type', cell: (i) => i.type },
            { header: 'Target table', cell: (i) => i.targetTable },
            {
              header: 'Accepts bulk import',
              cell: (i) =>
                `${i.acceptBulkImportRequests ? 'Yes' : 'No'}${i.maxPayloadSizeKb === null ? '' : ` (max ${i.maxPayloadSizeKb} KB)`}`,
            },
            { header: 'Write mode', cell: (i) => i.writeMode },
            { header: 'On record error', cell: (i) => i.onRecordError },
          ],
        })}`,
      );
    });

    router.get('/integrations/new', 'configure', async (_request, ctx) => {
      const taken = (await listIntegrations(db.kysely)).map((i) => i.sortingOrder);
      const next = taken.length === 0 ? 1 : Math.max(...taken) + 1;
      return newPage(ctx, { sortingOrder: String(next) }, formErrors(undefined, NEW_PLACES));
    });

    router.post(
      '/integrations/new/validate',
      'configure',
      async (_request, _ctx, form) => liveCheck(await refusal(async () => checkNewIntegration(db, declarationOf(form))), NEW_PLACES),
      { body: NewBody },
    );

    router.post(
      '/integrations/new',
      'configure',
      async (_request, ctx, form) => {
        let sortingOrder = 0;
        const error = await refusal(async () => {
          const input = declarationOf(form);
          sortingOrder = input.sortingOrder;
          await createIntegration(db, input, clock);
        });
        if (error !== undefined) return newPage(ctx, Object.fromEntries(form), formErrors(error, NEW_PLACES));
        return redirect(path(['integrations', sortingOrder]), {
          kind: 'info',
          text: `Integration ${sortingOrder} was created; add its fields and mappings.`,
        });
      },
      { body: NewBody },
    );

    router.get(
      '/integrations/:no',
      'read',
      async (request, ctx) => {
        const { no, plan } = await loadPlan(request.params.no);
        const state = stateOfPlan(plan);
        return ctx.page(
          `Integration ${no} ${plan.integration.name}`,
          integrationCard(
            {
              no,
              targetTable: plan.integration.targetTable,
              targetFields: await targetFieldsOf(plan.integration.targetTable),
              state,
              errors: formErrors(undefined, {}),
            },
            ctx,
          ),
        );
      },
      NoParams,
    );

    router.post(
      '/integrations/:no/validate',
      'configure',
      async (request, _ctx, form) => {
        const { no } = await loadPlan(request.params.no);
        const state = stateOfForm(form);
        const sent = sentRows(state);
        return liveCheck(await refusal(async () => checkIntegrationChange(db, no, changeOf(state, sent))), cardPlaces(sent));
      },
      { ...NoParams, body: CardBody },
    );

    router.post(
      '/integrations/:no',
      'configure',
      async (request, ctx, form) => {
        const { no, plan } = await loadPlan(request.params.no);
        const sentState = stateOfForm(form);
        const targetFields = await targetFieldsOf(plan.integration.targetTable);
        const show = (state: CardState, errors: FormErrors, more: { suggested?: number; focusRow?: number } = {}) =>
          ctx.page(
            `Integration ${no} ${plan.integration.name}`,
            integrationCard({ no, targetTable: plan.integration.targetTable, targetFields, state, errors, ...more }, ctx),
          );
        const { add, remove } = request.body;
        if (add !== undefined || remove !== undefined) {
          const changed = add !== undefined ? addRow(sentState) : removeRow(sentState, Number(remove));
          const { state, suggested } = suggestTargets(changed, targetFields);
          return show(state, formErrors(undefined, {}), {
            suggested,
            ...(add !== undefined ? { focusRow: state.rows.length - 1 } : {}),
          });
        }
        const sent = sentRows(sentState);
        const error = await refusal(async () => updateIntegration(db, no, changeOf(sentState, sent), clock));
        if (error !== undefined) return show(sentState, formErrors(error, cardPlaces(sent)));
        return redirect(path(['integrations', no]), { kind: 'info', text: `Integration ${no} was saved.` });
      },
      { ...NoParams, body: CardBody },
    );
  };
}
