/**
 * "Try a payload" on an integration's card: a pasted payload goes through the integration exactly as
 * a bulk import request would (records path, mapping, conversions, related keys), and the page shows
 * the rows it would write or each record's errors. Nothing is written, nothing is queued.
 */
import { AppError } from '../core/errors.js';
import { FormBody, FormText, sortingOrderOf, PathKey, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { field, formError, table } from '../console/widgets.js';
import { getIntegration } from '../integrations/store.js';
import { extractRecords } from '../mapping/payload.js';
import type { Db } from '../storage/db.js';
import type { SqlValue } from '../mapping/convert.js';
import { loadDryRunIntegration, mapSample, type DryRunRow } from '../table-writer/dry-run.js';

/** Records mapped and shown; the count of all records is shown either way. */
const TRIED_RECORDS = 200;
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

function result(rows: readonly DryRunRow[], total: number): Html {
  const ok = rows.filter((r) => 'row' in r);
  const bad = rows.filter((r) => 'errors' in r);
  const columns = ok.length > 0 && 'row' in ok[0]! ? Object.keys(ok[0].row) : [];
  return html`<section aria-label="Result" id="try-result">
    <h2>Result</h2>
    <p role="status">
      ${total} record${total === 1 ? '' : 's'} found${total > TRIED_RECORDS ? html`; the first ${TRIED_RECORDS} were tried` : ''}:
      ${ok.length} would be written, ${bad.length} ha${bad.length === 1 ? 's' : 've'} errors.
    </p>
    ${
      bad.length === 0
        ? ''
        : html`<h3>Errors</h3>
            ${table({
              rows: bad.flatMap((r) => ('errors' in r ? r.errors.map((message) => ({ recordNo: r.recordNo, message })) : [])),
              columns: [
                { header: 'Record', numeric: true, cell: (e) => e.recordNo },
                { header: 'Message', cell: (e) => e.message },
              ],
            })}`
    }
    ${
      ok.length === 0
        ? ''
        : html`<h3>Rows it would write</h3>
            ${table({
              rows: ok.flatMap((r) => ('row' in r ? [r] : [])),
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

export function tryPayloadPages(db: Db): ConsolePages {
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
        const records = extractRecords(payload, integration.recordsPath, mapping.records);
        if (!Array.isArray(records)) return ctx.page(title, html`${back}${form(no, ctx, payload)} ${formError(records.message)}`);
        const rows = await mapSample(mapping, integration.relationExists, records.slice(0, TRIED_RECORDS));
        return ctx.page(title, html`${back}${form(no, ctx, payload)}${result(rows, records.length)}`);
      },
      { ...NoParams, body: TryBody, bodyLimit: PASTED_PAYLOAD_BYTES },
    );
  };
}
