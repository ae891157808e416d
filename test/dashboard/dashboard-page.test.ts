/**
 * The dashboard page as the service answers it: the health line with its reason, a Failed count in a
 * red badge, records imported by REST runs in the chart, an empty chart in words, and a held job queue
 * entry that shows no next run.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startConsolePages, seedRequest, seedRun, type ConsolePages } from '../helpers/console-pages.js';

let c: ConsolePages;

beforeAll(async () => {
  c = await startConsolePages();
});
afterAll(async () => {
  await c?.cleanup();
});
beforeEach(async () => {
  await c.t.service.db.kysely.deleteFrom('ifw_bulk_import_request').execute();
  await c.t.service.db.kysely.deleteFrom('ifw_import_run').execute();
  // This service runs no workers: its entries are made due now, so that none is overdue (an alarm) whatever the time since the template was made.
  const now = new Date().toISOString();
  await c.t.service.db.kysely.updateTable('ifw_job_queue_entry').set({ status: 'Ready', next_run_at: now, last_ended_at: now }).execute();
});

const dashboard = async (set: 'SUPER' | 'VENDOR IF STANDARD' = 'SUPER') => {
  const page = await (await c.as(set)).get('/');
  expect(page.status).toBe(200);
  return page.text;
};
/** The health line's markup. */
const health = (text: string) => /<div class="health health-(\w+)"[^>]*>([\s\S]*?)<\/div>/.exec(text);
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('the dashboard', () => {
  it('is green with nothing to report, and its empty charts say so in words', async () => {
    const text = await dashboard();
    expect(health(text)?.[1]).toBe('green');
    expect(textOf(health(text)![2]!)).toBe('Healthy: Nothing failed; no imports in the last 24 h');
    expect(text).toContain('No requests in the last hour');
    expect(text).toContain('No records imported in the last hour');
  });

  it('is green saying "All requests completed" when every request of the day completed', async () => {
    await seedRequest(c.t, { status: 'Completed' });
    await seedRequest(c.t, { status: 'Completed' });
    const text = await dashboard();
    expect(health(text)?.[1]).toBe('green');
    expect(textOf(health(text)![2]!)).toBe('Healthy: All requests completed');
  });

  it('is red with the count when requests Failed, and shows the Failed count in a red badge', async () => {
    await seedRequest(c.t, { status: 'Failed' });
    await seedRequest(c.t, { status: 'Failed' });
    await seedRequest(c.t, { status: 'Completed' });
    const text = await dashboard();
    expect(health(text)?.[1]).toBe('red');
    expect(textOf(health(text)![2]!)).toBe('Problems: 2 requests Failed in the last 24 h');
    // The card of Failed requests: coloured, its count, its label a red badge linking to the Failed requests.
    expect(text).toMatch(
      /<div class="card tone-bad">\s*<div class="n">2<\/div>\s*<div><a href="\/requests\?status=Failed"><span class="badge bad">Failed<\/span><\/a><\/div>/,
    );
    // A status with nothing in it is not coloured.
    expect(text).toMatch(/<div class="card">\s*<div class="n">0<\/div>\s*<div><a href="\/requests\?status=Pending">Pending<\/a>/);
  });

  it('is amber when a job queue entry is On Hold, and its Next run says it is held', async () => {
    await c.t.service.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ status: 'On Hold' })
      .where('id', '=', 'bulk-import-processor')
      .execute();
    const text = await dashboard();
    expect(health(text)?.[1]).toBe('amber');
    expect(textOf(health(text)![2]!)).toMatch(/^Needs a look: job queue entry .*Bulk Import Processor is On Hold$/);
    expect(text).toContain('On Hold: not until set Ready');
  });

  it('counts the records REST import runs wrote in "Records imported", beside those of requests', async () => {
    await seedRun(c.t, { inserted: 60, updated: 20 });
    await seedRun(c.t, { status: 'Failed', inserted: 0 });
    const text = await dashboard();
    expect(textOf(text)).toContain('Records imported: 80 in the last 60 minutes (highest 80 per minute)');
    expect(text).toContain('REST import runs: 80');
    // A failed run is red too, and the runs' counts link to the runs of that status.
    expect(textOf(health(text)![2]!)).toBe('Problems: 1 import run Failed in the last 24 h');
    expect(text).toMatch(/<div class="card tone-bad">\s*<div class="n">1<\/div>\s*<div><a href="\/runs\?status=Failed">/);
  });

  it('counts REST runs\u2019 records for a user who may not see requests, and shows no request counts', async () => {
    await seedRequest(c.t, { status: 'Failed' });
    await seedRun(c.t, { inserted: 7 });
    const text = await dashboard('VENDOR IF STANDARD');
    expect(text).not.toContain('Bulk import requests, last 24 hours');
    expect(text).not.toContain('Requests submitted');
    expect(textOf(text)).toContain('Records imported: 7 in the last 60 minutes');
    expect(health(text)?.[1]).toBe('green');
  });
});
