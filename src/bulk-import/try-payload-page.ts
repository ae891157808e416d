/**
 * "Try a payload" on an integration's card: a pasted payload is imported exactly as a bulk import
 * request would be, under the integration's settings (records path, mapping, conversions, related
 * keys, write mode, On record error, the rows already in the table), in a transaction that is rolled
 * back (table-writer/dry-run.ts). The page shows how the request would end, with its counts and its
 * messages word for word, the first records' rows or errors, and source paths that match nothing.
 * Nothing is written, nothing is queued.
 */
import { AppError } from '../core/errors.js';
import { FormBody, FormText, sortingOrderOf, PathKey, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { field, formError, table } from '../console/widgets.js';
import { getIntegration } from '../integrations/store.js';
import { extractRecords } from '../mapping/payload.js';
import type { Database } from '../storage/database.js';
import type { SqlValue } from '../mapping/convert.js';
import { describeDryRun, dryRunSummary, loadDryRunIntegration, type DryRun } from '../table-writer/dry-run.js';

/** Records shown (all of them are imported, and counted). */
const SHOWN_RECORDS = 200;
/** A pasted payload may be larger than the console's other forms (which stop at a few hundred KB). */
const PASTED_PAYLOAD_BYTES = 16 * 1024 * 1024;
const NoParams = { params: PathKey('no') };
const TryBody = FormBody({ payload: FormText(PASTED_PAYLOAD_BYTES) });

function form(no: number, ctx: ConsoleContext, payload: string): Html {
  return html`<form method="post" action="${path(['integrations', no, 'try'])}">
    <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
    ${field({ kind: 'textarea', name: 'payload', label: 'Payload (JSON, as a caller sends it in "payload")', value: payload, rows: 10, required: true })}
    <button type="submit">Try it</button> <span class="hint">Nothing is written.</span>
  </form>`;
}

function result(dryRun: DryRun, total: number): Html {
  const { outcome, rows, warnings } = dryRun;
  const ok = rows.flatMap((r) => ('row' in r ? [r] : []));
  const columns = ok.length > 0 ? Object.keys(ok[0]!.row) : [];
  const errors = outcome.errors.map((e) => ({ recordNo: e.recordNo, message: e.message }));
  return html`<section aria-label="Result" id="try-result">
    <h2>Result</h2>
    <p role="status" class="${outcome.ok ? 'ok' : 'bad'}">
      <strong>${dryRunSummary(outcome)}</strong> ${total} record${total === 1 ? '' : 's'}
      found${outcome.errorCount > 0 ? `, ${outcome.errorCount} error${outcome.errorCount === 1 ? '' : 's'}` : ''}.
    </p>
    ${outcome.errorMessage === '' ? '' : html`<p>Its error message would be: <q>${outcome.errorMessage}</q></p>`}
    ${
      warnings.length === 0
        ? ''
        : html`<div class="warning" role="status">
            <strong>Warnings</strong>
            <ul>
              ${warnings.map((w) => html`<li>${w}</li>`)}
            </ul>
          </div>`
    }
    ${
      errors.length === 0
        ? ''
        : html`<h3>Errors${outcome.errorCount > errors.length ? ` (the first ${errors.length} of ${outcome.errorCount})` : ''}</h3>
            ${table({
              rows: errors,
              columns: [
                { header: 'Record', numeric: true, cell: (e) => e.recordNo ?? '' },
                { header: 'Message', cell: (e) => e.message },
              ],
            })}`
    }
    ${
      ok.length === 0
        ? ''
        : html`<h3>
              ${outcome.ok ? 'Rows it would write' : 'Rows of the records without errors (nothing would be written)'}${total > SHOWN_RECORDS ? ` (of the first ${SHOWN_RECORDS} records)` : ''}
            </h3>
            ${table({
              rows: ok,
              columns: [
                { header: 'Record', numeric: true, cell: (r) => r.recordNo },
                ...columns.map((c) => ({
                  header: c,
                  cell: (r: { readonly row: Readonly<Record<string, SqlValue>> }) =>
                    r.row[c] === null ? html`<span class="muted">null</span>` : String(r.row[c]),
                })),
              ],
            })}`
    }
  </section>`;
}

/** `db`: the database itself, not a transaction (a try imports in a transaction of its own and rolls it back). */
export function tryPayloadPages(db: Database): ConsolePages {
  return (router) => {
    router.get(
      '/integrations/:no/try',
      'configure',
      async (request, ctx) => {
        const no = sortingOrderOf(request.params.no);
        const integration = await getIntegration(db, no);
        if (integration === undefined) throw new AppError(404, 'notFound', `No integration ${no}.`);
        return ctx.page(
          `Try a payload: integration ${no} ${integration.name}`,
          html`<p><a href="${path(['integrations', no])}">← Integration ${no}</a></p>
            ${form(no, ctx, '')}`,
        );
      },
      NoParams,
    );

    router.post(
      '/integrations/:no/try',
      'configure',
      async (request, ctx) => {
        const no = sortingOrderOf(request.params.no);
        const integration = await loadDryRunIntegration(db, no);
        if (integration === undefined) throw new AppError(404, 'notFound', `No integration ${no}.`);
        const { payload } = request.body;
        const title = `Try a payload: integration ${no}`;
        const back = html`<p><a href="${path(['integrations', no])}">← Integration ${no}</a></p>`;
        const { mapping } = integration;
        if ('error' in mapping)
          return ctx.page(title, html`${back} ${formError(`The integration cannot run: ${mapping.error}`)} ${form(no, ctx, payload)}`);
        // The records are read again only to show them: the outcome is the import's own.
        const records = extractRecords(payload, integration.recordsPath, mapping.records);
        const outcome = await integration.importPayload(payload);
        if (!Array.isArray(records)) {
          const failed = html`<strong>${dryRunSummary(outcome)}</strong> ${records.message}`;
          return ctx.page(title, html`${back}${form(no, ctx, payload)} ${formError(failed)}`);
        }
        const dryRun = describeDryRun(integration, mapping, records, outcome, SHOWN_RECORDS);
        return ctx.page(title, html`${back}${form(no, ctx, payload)}${result(dryRun, records.length)}`);
      },
      { ...NoParams, body: TryBody, bodyLimit: PASTED_PAYLOAD_BYTES },
    );
  };
}
