/**
 * `ifw requests list|show|cancel|reset|resubmit` as processes (the built bin/ifw.js) against a started
 * service on a real socket: what they print (the service's JSON) and their exit codes (0 for a 2xx
 * answer, 1 for a refusal).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRequest } from '../helpers/console-pages.js';
import { assertBuilt, runIfw } from '../helpers/process.js';
import { startTestService, type TestService } from '../helpers/service.js';

describe('ifw requests against a service', () => {
  let t: TestService;
  let url: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    assertBuilt();
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    url = (await t.service.listen()).replace('localhost', '127.0.0.1');
    env = { IFW_TOKEN: t.headers.authorization.replace(/^Bearer /, '') };
  });
  afterAll(async () => t?.cleanup());

  // Each command is a new Node process: a few of them per test, so a test has minutes on a busy machine.
  const ifw = (...args: string[]) => runIfw(['requests', ...args, '--url', url], env, { timeoutMs: 60_000 });

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
});
