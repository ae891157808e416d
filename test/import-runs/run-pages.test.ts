/** The Import Runs pages as the service answers them: integrations by name, linked to their card; runs filtered by status. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsolePages, seedRun, type ConsolePages } from '../helpers/console-pages.js';

let c: ConsolePages;
let completed: string;
let failed: string;

beforeAll(async () => {
  c = await startConsolePages();
  completed = await seedRun(c.t, { inserted: 3 });
  failed = await seedRun(c.t, { status: 'Failed' });
});
afterAll(async () => {
  await c?.cleanup();
});

const get = async (path: string) => {
  const page = await (await c.as('VENDOR IF STANDARD')).get(path);
  expect(page.status).toBe(200);
  return page.text;
};

describe('import runs in the console', () => {
  it('lists each run’s integration by name, linked to its card', async () => {
    const text = await get('/runs');
    expect(text).toContain('<a href="/integrations/10">Customers</a> <span class="muted">(10)</span>');
    expect(text).toContain(`/runs/${completed}`);
    expect(text).toContain(`/runs/${failed}`);
  });

  it('filters the runs by status (the dashboard’s counts link there)', async () => {
    const text = await get('/runs?status=Failed');
    expect(text).toContain(`/runs/${failed}`);
    expect(text).not.toContain(`/runs/${completed}`);
    expect(text).toMatch(/<option value="Failed"\s+selected>Failed<\/option>/);
  });

  it('refuses a status that is none of the runs’ statuses with a 400 page in words', async () => {
    const page = await (await c.as('VENDOR IF STANDARD')).get('/runs?status=Done');
    expect(page.status).toBe(400);
    expect(page.text).toContain('Status must be one of Queued, Running, Completed, Failed, Cancelled.');
  });

  it('names the integration on a run’s page', async () => {
    const text = await get(`/runs/${completed}`);
    expect(text).toMatch(
      /<dt>Integration<\/dt>\s*<dd><a href="\/integrations\/10">Customers<\/a> <span class="muted">\(10\)<\/span><\/dd>/,
    );
  });
});
