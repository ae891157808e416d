/**
 * Cancel and per-record errors of import runs where a person or a client reaches them: the bound action
 * `importRuns(<id>)/Microsoft.NAV.cancel` and `importRuns(<id>)/errors` (answers checked against the
 * OpenAPI document), and the run's console page (the Cancel run button, the errors with their page).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsolePages, seedRun, type ConsolePages } from '../helpers/console-pages.js';
import { API } from '../helpers/service.js';

let c: ConsolePages;
beforeAll(async () => {
  c = await startConsolePages();
});
afterAll(async () => {
  await c?.cleanup();
});

const RUNS = `${API}/importRuns`;

async function seedErrors(runId: string): Promise<void> {
  await c.t.service.db.kysely
    .insertInto('ifw_import_run_error')
    .values([
      {
        run_id: runId,
        seq: 1,
        record_no: 12,
        page_no: 2,
        record_on_page: 2,
        field: 'name',
        value: '"too long"',
        rule: 'exceeds 20 characters',
        message: 'record 12 (page 2, record 2): field "name" exceeds 20 characters',
      },
      {
        run_id: runId,
        seq: 2,
        record_no: 31,
        page_no: 4,
        record_on_page: 1,
        field: 'no',
        value: null,
        rule: 'is required',
        message: 'record 31 (page 4, record 1): field "no" is required',
      },
    ])
    .execute();
}

describe('the import run API', () => {
  it('cancels a Queued run (200, Cancelled), refuses an ended one (409) and an unknown one (404)', async () => {
    const runId = await seedRun(c.t, { status: 'Queued', endpointCode: 'api-cancel' });
    const cancelled = await c.t.inject({ method: 'POST', url: `${RUNS}(${runId})/Microsoft.NAV.cancel` });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ runId, status: 'Cancelled', errorMessage: 'Cancelled by an administrator.' });
    expect(cancelled.json<{ endedAt: string | null }>().endedAt).not.toBeNull();

    const again = await c.t.inject({ method: 'POST', url: `${RUNS}(${runId})/Microsoft.NAV.cancel` });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'invalidStatusTransition' } });

    const completed = await seedRun(c.t, { status: 'Completed' });
    expect((await c.t.inject({ method: 'POST', url: `${RUNS}(${completed})/Microsoft.NAV.cancel` })).statusCode).toBe(409);
    const unknown = await c.t.inject({ method: 'POST', url: `${RUNS}(0190a000-0000-7000-8000-00000000abcd)/Microsoft.NAV.cancel` });
    expect(unknown.statusCode).toBe(404);
  });

  it("lists a run's per-record errors with the page and place each record came from, paged", async () => {
    const runId = await seedRun(c.t, { status: 'Failed' });
    await seedErrors(runId);
    const all = await c.t.inject({ method: 'GET', url: `${RUNS}(${runId})/errors` });
    expect(all.statusCode).toBe(200);
    expect(all.json<{ value: unknown[] }>().value).toEqual([
      expect.objectContaining({ seq: 1, recordNo: 12, pageNo: 2, recordOnPage: 2, field: 'name', rule: 'exceeds 20 characters' }),
      expect.objectContaining({ seq: 2, recordNo: 31, pageNo: 4, recordOnPage: 1, field: 'no', value: null }),
    ]);
    const second = await c.t.inject({ method: 'GET', url: `${RUNS}(${runId})/errors?$skip=1&$top=1` });
    expect(second.json<{ value: { seq: number }[] }>().value.map((e) => e.seq)).toEqual([2]);
    const none = await c.t.inject({ method: 'GET', url: `${RUNS}(0190a000-0000-7000-8000-00000000abcd)/errors` });
    expect(none.statusCode).toBe(404);
  });
});

describe("the run's console page", () => {
  it('offers Cancel run for a Running run; after the confirmation the run is Cancelled', async () => {
    const admin = await c.as('SUPER');
    const runId = await seedRun(c.t, { status: 'Running', endpointCode: 'run-page-cancel' });
    const page = await admin.get(`/runs/${runId}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(new RegExp(`action="/runs/${runId}/cancel"[^>]*hx-confirm="Cancel import run`));
    expect(page.text).not.toContain('Only a Queued or Running run can be cancelled.');

    const posted = await admin.post(`/runs/${runId}/cancel`, { _csrf: admin.csrf });
    expect([posted.status, posted.headers.get('location')]).toEqual([303, `/runs/${runId}`]);
    expect((await c.t.inject({ method: 'GET', url: `${RUNS}(${runId})` })).json()).toMatchObject({ status: 'Cancelled' });
    const after = await admin.get(`/runs/${runId}`);
    expect(after.text).toContain('Only a Queued or Running run can be cancelled.');
  });

  it('shows the record errors of a run with their page and place on it', async () => {
    const admin = await c.as('SUPER');
    const runId = await seedRun(c.t, { status: 'Failed' });
    await seedErrors(runId);
    const page = await admin.get(`/runs/${runId}`);
    expect(page.text).toContain('Record errors (2)');
    expect(page.text).toContain('record 12 (page 2, record 2): field &quot;name&quot; exceeds 20 characters');
    expect(page.text).toMatch(/<th[^>]*>Page<\/th>/);
    expect(page.text).toMatch(/<th[^>]*>On page<\/th>/);
  });
});
