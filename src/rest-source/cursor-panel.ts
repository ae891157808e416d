/**
 * The endpoint card's **Incremental imports** panel (endpoint-pages.ts): the cursor field bookmark and
 * the last successful run, and for an administrator a form that sets the bookmark and a button that
 * resets it (both with the console's CSRF token, posting to `/rest/endpoints/<code>/cursor…`).
 */
import type { ConsoleContext } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton } from '../console/widgets.js';
import { DEFAULT_INITIAL, type EndpointBookmark } from './cursor-values.js';
import type { EndpointSettings } from './settings.js';

export function cursorPanel(ctx: ConsoleContext, endpoint: EndpointSettings, bookmark: EndpointBookmark): Html {
  const { incremental, code } = endpoint;
  const lastSuccess = html`<p>
    Last successful run started: <strong>${bookmark.lastSuccessfulRunStartedAt ?? 'none yet'}</strong>
    <span class="muted">(what <code>{{lastSuccessfulRun.startedAt}}</code> sends; before the first one, 1970-01-01T00:00:00Z)</span>
  </p>`;
  if (incremental === null)
    return html`<section aria-label="Incremental imports" class="card" id="bookmark">
      <h2>Incremental imports</h2>
      ${lastSuccess}
      <p class="muted">No cursor field: set one below to keep a bookmark and send it as <code>{{cursor}}</code>.</p>
    </section>`;
  const initial = incremental.cursorFieldInitialValue ?? DEFAULT_INITIAL[incremental.cursorFieldType];
  const canChange = ctx.can('configureRest');
  return html`<section aria-label="Incremental imports" class="card" id="bookmark">
    <h2>Incremental imports</h2>
    <p role="status">
      Bookmark (highest <code>${incremental.cursorField}</code> imported):
      <strong>${bookmark.cursorValue ?? `none: the next run sends the initial value ${initial}`}</strong>
      ${bookmark.cursorUpdatedAt === null ? '' : html`<span class="muted">(changed ${bookmark.cursorUpdatedAt})</span>`}
    </p>
    ${lastSuccess}
    ${
      canChange
        ? html`<form method="post" action="${path(['rest', 'endpoints', code, 'cursor'])}" class="inline">
              <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
              <label for="cursor-value">Set the bookmark to</label>
              <input id="cursor-value" name="value" required value="${bookmark.cursorValue ?? ''}" />
              <button type="submit" class="secondary">Set bookmark</button>
            </form>
            ${actionButton({
              action: path(['rest', 'endpoints', code, 'cursor', 'reset']),
              label: 'Reset bookmark',
              csrfToken: ctx.csrfToken,
              secondary: true,
              showsPage: true,
            })}`
        : ''
    }
  </section>`;
}
