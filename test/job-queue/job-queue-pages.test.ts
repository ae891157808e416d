/** The Job Queue page as the service answers it: a held entry shows no next run, and each row's buttons have names of their own. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsolePages, type ConsolePages } from '../helpers/console-pages.js';

let c: ConsolePages;

beforeAll(async () => {
  c = await startConsolePages();
});
afterAll(async () => {
  await c?.cleanup();
});

/** The row of one entry. */
const row = (text: string, id: string) => new RegExp(`<tr\\s+data-entry="${id}"[^>]*>([\\s\\S]*?)</tr>`).exec(text)?.[1] ?? '';

describe('the job queue page', () => {
  it('shows a held entry’s Next run as held, not as a time', async () => {
    const client = await c.as('SUPER');
    const held = await client.post('/job-queue/retention-cleanup/hold', { _csrf: client.csrf });
    expect(held.status).toBe(303);
    const page = await client.get('/job-queue');
    const cells = row(page.text, 'retention-cleanup').split('</td>');
    // Next run is the sixth column.
    expect(cells[5]).toContain('On Hold: not until set Ready');
    expect(cells[5]).not.toContain('<time');
    // A Ready entry still shows its time.
    expect(row(page.text, 'bulk-import-processor').split('</td>')[5]).toContain('<time datetime=');
    await client.post('/job-queue/retention-cleanup/ready', { _csrf: client.csrf });
  });

  it('names each button after its entry, so that three "Set On Hold" buttons are told apart', async () => {
    const page = await (await c.as('SUPER')).get('/job-queue');
    const names = [...page.text.matchAll(/aria-label="(Set On Hold: [^"]+)"/g)].map((m) => m[1]);
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('Set On Hold: VENDOR IF Bulk Import Processor');
    for (const verb of ['Set Ready', 'Run now'])
      expect([...page.text.matchAll(new RegExp(`aria-label="(${verb}: [^"]+)"`, 'g'))]).toHaveLength(names.length);
  });
});
