/**
 * An import run's page in a real browser: a Queued run cancelled with its button after the
 * confirmation, and a Failed run's record errors with the page and place each record came from.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRun } from '../helpers/console-pages.js';
import { browserAvailable, expectAccessible, screenshot, startConsole, type ConsoleFixture } from '../helpers/browser.js';
import { API } from '../helpers/service.js';

describe.runIf(browserAvailable())('admin console: an import run page in the browser', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;
  beforeAll(async () => {
    c = await startConsole();
  });
  afterAll(async () => {
    await c?.close();
  });

  const statusOf = async (runId: string): Promise<string> => {
    const res = await fetch(`${c.base}${API}/importRuns(${runId})`, { headers: c.t.headers });
    return ((await res.json()) as { status: string }).status;
  };

  it('cancels a Queued run after a confirmation; the button is then disabled, saying why', async () => {
    const runId = await seedRun(c.t, { status: 'Queued', endpointCode: 'browser-cancel' });
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/runs/${runId}`);
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('status').getByText(`Import run ${runId} was cancelled.`).waitFor();
    expect(asked).toBe(`Cancel import run ${runId}? Nothing of it will be imported.`);
    await page.getByText('Only a Queued or Running run can be cancelled.').waitFor();
    expect(await page.getByRole('button', { name: 'Cancel run' }).isDisabled()).toBe(true);
    expect(await statusOf(runId)).toBe('Cancelled');
    await expectAccessible(page);
    await screenshot(page, 'import-run-cancelled');
    await page.context().close();
  });

  it("shows a Failed run's record errors with their page and place", async () => {
    const runId = await seedRun(c.t, { status: 'Failed', endpointCode: 'browser-errors' });
    await c.t.service.db.kysely
      .insertInto('ifw_import_run_error')
      .values({
        run_id: runId,
        seq: 1,
        record_no: 12,
        page_no: 2,
        record_on_page: 2,
        field: 'name',
        value: null,
        rule: 'is required',
        message: 'record 12 (page 2, record 2): field "name" is required',
      })
      .execute();
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/runs/${runId}`);
    await page.getByRole('heading', { name: 'Record errors (1)' }).waitFor();
    const row = page.getByRole('row', { name: /record 12 \(page 2, record 2\)/ });
    await expect.poll(async () => (await row.getByRole('cell').allInnerTexts()).slice(0, 4)).toEqual(['12', '2', '2', 'name']);
    await page.context().close();
  });
});
