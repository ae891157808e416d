/**
 * `ifw requests list|show|cancel|reset|resubmit|delete|payload|bulk` as processes (the built bin/ifw.js)
 * against a started service on a real socket: what they print (the service's JSON with --json, lines
 * for a person without) and their exit codes (0 for a 2xx answer, 1 for a refusal, 3 for a bulk action
 * that refused some requests).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRequest } from '../helpers/console-pages.js';
import { assertBuilt, runIfw } from '../helpers/process.js';
import { startListeningService, type TestService } from '../helpers/service.js';

describe('ifw requests against a service', () => {
  let t: TestService;
  let url: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    assertBuilt();
    ({ t, url, env } = await startListeningService());
  });
  afterAll(async () => t?.cleanup());

  // Each command is a new Node process: a few of them per test, so a test has minutes on a busy machine.
  const ifw = (...args: string[]) => runIfw(['requests', ...args, '--url', url, '--json'], env, { timeoutMs: 60_000 });
  const human = (...args: string[]) => runIfw(['requests', ...args, '--url', url], env, { timeoutMs: 60_000 });
  const statusOf = async (id: string) =>
    (await t.service.db.kysely.selectFrom('ifw_bulk_import_request').select('status').where('request_id', '=', id).executeTakeFirst())
      ?.status;

  it('lists by status and integration, newest first, and shows one with its details', async () => {
    const older = await seedRequest(t, { status: 'Failed', submittedAt: '2026-11-01T10:00:00.000Z' });
    const newer = await seedRequest(t, { status: 'Failed', submittedAt: '2026-11-02T10:00:00.000Z' });
    await seedRequest(t, { status: 'Completed', submittedAt: '2026-11-03T10:00:00.000Z' });
    const listed = await ifw('list', '--status', 'Failed', '--integration', '10', '--since', '2026-11-01T00:00:00Z');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).value.map((r: { requestId: string }) => r.requestId)).toEqual([newer, older]);

    const shown = await ifw('show', older);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ requestId: older, status: 'Failed', errors: [] });

    const unknown = await ifw('show', '0190f0e0-0000-7000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.code).toBe('notFound');
  }, 300_000);

  it('resubmits a Failed request, refuses a second resubmit with exit code 1, and cancels the new one', async () => {
    const failed = await seedRequest(t, { status: 'Failed' });
    const resubmitted = await ifw('resubmit', failed);
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    const created = JSON.parse(resubmitted.stdout) as { requestId: string; status: string };
    expect(created.status).toBe('Pending');
    expect(resubmitted.stderr).toContain(
      `ifw: request ${failed} resubmitted as ${created.requestId}; follow it with: ifw status ${created.requestId} --wait`,
    );

    const again = await ifw('resubmit', failed);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.message).toContain(`already resubmitted as ${created.requestId}`);

    const cancelled = await ifw('cancel', created.requestId);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ requestId: created.requestId, status: 'Cancelled' });
    const reset = await ifw('reset', created.requestId);
    expect(reset.code).toBe(1);
    expect(JSON.parse(reset.stdout).error.code).toBe('invalidStatusTransition');
  }, 300_000);

  it('prints lines for a person without --json, and tells a refusal on stderr', async () => {
    const failed = await seedRequest(t, { status: 'Failed', submittedAt: '2026-10-01T10:00:00.000Z', integrationSortingOrder: 40 });
    const listed = await human('list', '--integration', '40');
    expect(listed.code, listed.stderr).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^REQUEST\s+STATUS\s+INTEGRATION\s+SUBMITTED\s+RECORDS\s+ERROR$/);
    expect(row).toMatch(new RegExp(`^${failed}\\s+Failed\\s+40\\s+2026-10-01T10:00:00.000Z\\s+0`));
    const shown = await human('show', failed);
    expect(shown.stdout).toMatch(new RegExp(`^requestId:\\s+${failed}$`, 'm'));
    expect(shown.stdout).toMatch(/^status:\s+Failed$/m);
    const refused = await human('cancel', failed);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      `ifw: Request ${failed} is Failed; only Pending or Processing requests can be cancelled. (invalidStatusTransition)`,
    );
  }, 300_000);

  it('deletes an ended request, refuses a Pending one with exit code 1', async () => {
    const done = await seedRequest(t, { status: 'Completed' });
    const pending = await seedRequest(t, { status: 'Pending' });
    const deleted = await ifw('delete', done);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ requestId: done, deleted: true });
    expect(await statusOf(done)).toBeUndefined();
    const refused = await human('delete', pending);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(requestNotEnded)');
    expect(await statusOf(pending)).toBe('Pending');
  }, 300_000);

  it('streams a payload to stdout or to a file, byte for byte; an unknown request exits 1', async () => {
    const text = '[{"no":"C1","name":"Ünïcode ✓"},{"no":"C2","name":"Two"}]';
    const res = await t.inject({
      method: 'POST',
      url: '/api/vendor/integrationFramework/v1.0/bulkImportRequests',
      payload: { integrationSortingOrder: 10, payload: text },
    });
    const id = res.json<{ requestId: string }>().requestId;
    const out = await human('payload', id);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(text);
    const file = path.join(t.dir, 'payload-out.json');
    const saved = await human('payload', id, '--output', file);
    expect(saved.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    const unknown = await ifw('payload', '0190f0e0-0000-7000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.code).toBe('notFound');
  }, 300_000);

  it('bulk: acts on what the flags select, exit code 3 when some were refused, --all goes on until none remains', async () => {
    const pending = [
      await seedRequest(t, { status: 'Pending', integrationSortingOrder: 50 }),
      await seedRequest(t, { status: 'Pending', integrationSortingOrder: 50 }),
    ];
    const completed = await seedRequest(t, { status: 'Completed', integrationSortingOrder: 50 });
    const other = await seedRequest(t, { status: 'Pending', integrationSortingOrder: 51 });
    const partial = await ifw('bulk', 'cancel', '--integration', '50');
    expect(partial.code, partial.stderr).toBe(3);
    const answer = JSON.parse(partial.stdout) as {
      matched: number;
      succeeded: number;
      refused: number;
      results: { requestId: string; outcome: string }[];
    };
    expect(answer).toMatchObject({ matched: 3, succeeded: 2, refused: 1 });
    expect(answer.results.find((r) => r.requestId === completed)?.outcome).toBe('Refused');
    for (const id of pending) expect(await statusOf(id)).toBe('Cancelled');
    expect(await statusOf(other)).toBe('Pending');

    const all = await human('bulk', 'delete', '--integration', '50', '--status', 'Cancelled', '--top', '1', '--all');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain('2 matched; 1 taken: 1 done, 0 refused; more remain');
    expect(all.stdout).toContain('Deleted');
    for (const id of pending) expect(await statusOf(id)).toBeUndefined();
    expect(await statusOf(completed)).toBe('Completed');

    const unfiltered = await human('bulk', 'delete');
    expect(unfiltered.code).toBe(1);
    expect(unfiltered.stderr).toContain('--every-request to act on every request');
    expect(await statusOf(completed)).toBe('Completed');

    const wrong = await human('bulk', 'explode', '--integration', '50');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('the action must be cancel, reset, resubmit or delete');
  }, 300_000);
});
