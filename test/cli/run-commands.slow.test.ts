/**
 * `ifw runs list|show|cancel` as processes (the built bin/ifw.js) against a started service on a real
 * socket: the lines for a person, the service's JSON with --json, and the exit codes (0 answered, 1
 * refused or unreachable).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRun } from '../helpers/console-pages.js';
import { assertBuilt, runIfw } from '../helpers/process.js';
import { startListeningService, type TestService } from '../helpers/service.js';

describe('ifw runs against a service', () => {
  let t: TestService;
  let url: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    assertBuilt();
    ({ t, url, env } = await startListeningService());
  });
  afterAll(async () => t?.cleanup());

  const ifw = (...args: string[]) => runIfw(['runs', ...args, '--url', url], env, { timeoutMs: 60_000 });

  it('lists runs newest first, by status, as lines or as JSON', async () => {
    const older = await seedRun(t, { status: 'Failed', endpointCode: 'cli-a' });
    const newer = await seedRun(t, { status: 'Queued', endpointCode: 'cli-b' });

    const json = await ifw('list', '--json');
    expect(json.code, json.stderr).toBe(0);
    const ids = (JSON.parse(json.stdout) as { value: { runId: string }[] }).value.map((r) => r.runId);
    expect(ids).toContain(older);
    expect(ids).toContain(newer);

    const queued = await ifw('list', '--status', 'Queued', '--json');
    expect((JSON.parse(queued.stdout) as { value: { runId: string }[] }).value.map((r) => r.runId)).toEqual([newer]);

    const lines = await ifw('list', '--status', 'Failed');
    expect(lines.code).toBe(0);
    expect(lines.stdout).toMatch(new RegExp(`^${older}\\s+Failed\\s+cli-a\\s`, 'm'));

    const bad = await ifw('list', '--status', 'Done');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--status must be one of Queued, Running, Completed, Failed, Cancelled');
  }, 300_000);

  it('shows a run with its record errors, and cancels a Queued run; an ended or unknown run exits 1', async () => {
    const runId = await seedRun(t, { status: 'Queued', endpointCode: 'cli-c' });
    const shown = await ifw('show', runId, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ runId, status: 'Queued', errors: [], pages: [] });

    const cancelled = await ifw('cancel', runId);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout.trim()).toBe(`import run ${runId} is Cancelled`);

    const again = await ifw('cancel', runId, '--json');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: 'invalidStatusTransition' } });
    const againLines = await ifw('cancel', runId);
    expect(againLines.code).toBe(1);
    expect(againLines.stderr).toContain('ifw: 409 invalidStatusTransition:');

    const failed = await seedRun(t, { status: 'Failed', endpointCode: 'cli-d' });
    await t.service.db.kysely
      .insertInto('ifw_import_run_error')
      .values({
        run_id: failed,
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
    const detail = await ifw('show', failed);
    expect(detail.code).toBe(0);
    expect(detail.stdout).toContain('Record errors (1):');
    expect(detail.stdout).toContain('page 2, record 2: record 12 (page 2, record 2): field "name" is required');

    const unknown = await ifw('show', '0190f0e0-0000-7000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('ifw: 404 notFound:');
  }, 300_000);

  it('exits 1 with the reason when the service cannot be reached', async () => {
    const result = await runIfw(['runs', 'list', '--url', 'http://127.0.0.1:9'], env, { timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach the service at http://127.0.0.1:9');
  }, 120_000);
});
