/**
 * The console's "Detect pagination" on an endpoint's card (endpoint-pages.ts): the proposed Pagination
 * section with the evidence for each setting, what was guessed, the pages fetched, and the problems of
 * the saved settings with their remedies; "Use these settings" posts the proposal back, and the card
 * answers with the endpoint's form filled with it, not saved (Save keeps it). Server-rendered forms
 * only: the console's CSP allows no inline script.
 */
import { html, path, type Html } from '../console/html.js';
import type { ConsoleContext } from '../console/console.js';
import { paginationOf } from '../pagination/index.js';
import type { PaginationDetection } from './detect-pagination.js';
import { proposedFields } from './detect-routes.js';

/** The proposal as hidden inputs of the endpoint form's names: a switch is "on" or left out, a null text is "". */
function proposalInputs(fields: Readonly<Record<string, string | number | boolean | null | undefined>>): Html[] {
  return Object.entries(fields).flatMap(([name, value]) => {
    if (value === false) return [];
    const shown = value === true ? 'on' : value === null || value === undefined ? '' : String(value);
    return [html`<input type="hidden" name="${name}" value="${shown}" />`];
  });
}

const shownValue = (value: unknown): string => (value === '' ? '"" (blank)' : value === null ? '—' : JSON.stringify(value));

/**
 * The detection's result: proposal, evidence, notes, pages, problems, and on a saved endpoint's card
 * "Use these settings" (`code` null: the new endpoint's form, already filled with the proposal).
 */
export function detectionPanel(ctx: ConsoleContext, code: string | null, d: PaginationDetection): Html {
  const fields = proposedFields(d.settings);
  const canUse = ctx.can('configureRest');
  return html`<section aria-label="Detected pagination" id="detected-pagination" class="card">
    <h2>Detected pagination</h2>
    <p role="status">
      <strong>Proposed: ${paginationOf(d.settings.type).title}</strong>, from <code>${d.url}</code> (HTTP ${d.status}) and
      ${d.pages.length - 1} more page${d.pages.length === 2 ? '' : 's'}.
    </p>
    <table>
      <caption>
        Proposed settings
      </caption>
      <thead>
        <tr>
          <th scope="col">Setting</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        ${Object.entries(fields).map(
          ([name, value]) =>
            html`<tr>
              <td><code>${name}</code></td>
              <td><code>${shownValue(value)}</code></td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Evidence</h3>
    <ul>
      ${d.evidence.map((e) => html`<li>${e}</li>`)}
    </ul>
    ${
      d.notes.length === 0
        ? ''
        : html`<div class="warning" role="status">
            <strong>Check before saving</strong>
            <ul>
              ${d.notes.map((n) => html`<li>${n}</li>`)}
            </ul>
          </div>`
    }
    <h3>Pages fetched</h3>
    <ul>
      ${d.pages.map((p) => html`<li>Page ${p.pageNo}: ${p.recordCount ?? 'no'} records, <code>${p.url}</code></li>`)}
    </ul>
    <h3>${code === null ? 'Check of the settings as they were typed' : 'Check of the saved settings'}</h3>
    ${
      d.problems.length === 0
        ? html`<p class="ok">The ${code === null ? 'typed' : 'saved'} settings agree with what the API showed.</p>`
        : html`<div class="warning" role="alert">
            <ul>
              ${d.problems.map((p) => html`<li><strong>${p.symptom}</strong>: ${p.message}. <em>Remedy:</em> ${p.remedy}.</li>`)}
            </ul>
          </div>`
    }
    ${
      canUse && code !== null
        ? html`<form method="post" action="${path(['rest', 'endpoints', code, 'use-detected'])}">
            <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
            ${proposalInputs(fields)}
            <button type="submit">Use these settings</button>
            <span class="muted">fills the Pagination section of the form below; nothing is saved until you press Save</span>
          </form>`
        : ''
    }
  </section>`;
}

/** The note above a form filled with the proposal. */
export const filledNote = (isNew = false): Html =>
  html`<p class="flash info" role="status">
    The detected settings are in the Pagination section below. They are not saved yet: check them, then press
    ${isNew ? 'Create endpoint' : 'Save'}.
  </p>`;
