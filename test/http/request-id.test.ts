/**
 * One id per HTTP request and per import: every log line of an HTTP request carries its `reqId`, the
 * answer's `request-id` header says it, and a caller's own id is kept only when well-formed; every log
 * line of a bulk import request's processing carries its `requestId`. No secret reaches the lines.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/core/logger.js';
import { API_BASE } from '../../src/http/odata.js';
import { buildServer, type App } from '../../src/http/server.js';
import { createQueueRunner } from '../../src/job-queue/runner.js';
import { jobKinds } from '../../src/main/jobs.js';
import { openTestDatabase } from '../helpers/db.js';
import { customersPayload, insertRequest, setupCustomers } from '../helpers/queue-fixtures.js';

type Line = Record<string, unknown>;

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Promise<Line[]> } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger({ logLevel: 'debug' }, {}, 1, { tty: false, stream });
  return {
    logger,
    async lines() {
      logger.flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
      return text
        .trimEnd()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line);
    },
  };
}

describe('the id of an HTTP request', () => {
  const log = capture();
  let app: App;
  const TOKEN = 'Bearer very-secret-token-value';

  beforeAll(async () => {
    app = await buildServer({
      logger: log.logger,
      bodyLimitBytes: 1 << 20,
      authenticator: {
        authenticate: () => Promise.resolve({ kind: 'application' as const, name: 'test', permissionSets: ['SUPER' as const] }),
      },
      routes: [
        (scope) => {
          // A handler that logs through its request's logger, then fails: three lines of one request.
          scope.get(`${API_BASE}/trouble`, { config: { permission: 'read' } }, (request) => {
            request.log.info({ step: 1 }, 'working on it');
            throw new Error('something broke');
          });
        },
      ],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is on every line of the request and in the answer’s request-id header', async () => {
    const res = await app.inject({ method: 'GET', url: `${API_BASE}/trouble`, headers: { authorization: TOKEN } });
    expect(res.statusCode).toBe(500);
    const id = res.headers['request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const lines = (await log.lines()).filter((l) => l.reqId === id);
    expect(lines.map((l) => l.msg)).toEqual(['working on it', 'internal error', 'request']);
    expect(JSON.stringify(await log.lines())).not.toContain('very-secret-token-value');
  });

  it('differs between requests, and keeps a caller’s well-formed id', async () => {
    const a = await app.inject({ method: 'GET', url: `${API_BASE}/trouble` });
    const b = await app.inject({ method: 'GET', url: `${API_BASE}/trouble` });
    expect(a.headers['request-id']).not.toBe(b.headers['request-id']);
    const mine = await app.inject({ method: 'GET', url: `${API_BASE}/trouble`, headers: { 'request-id': 'caller-4f2a:trace.7_1' } });
    expect(mine.headers['request-id']).toBe('caller-4f2a:trace.7_1');
    expect((await log.lines()).filter((l) => l.reqId === 'caller-4f2a:trace.7_1').map((l) => l.msg)).toEqual([
      'working on it',
      'internal error',
      'request',
    ]);
    // Answers of every kind carry it, a 404 of no route included.
    expect((await app.inject({ method: 'GET', url: '/nowhere' })).headers['request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([['with spaces in it'], ['x'.repeat(129)], ['line\\nbreak'], ['{"json":1}']])(
    'replaces a malformed incoming id: %s',
    async (given) => {
      const res = await app.inject({ method: 'GET', url: `${API_BASE}/trouble`, headers: { 'request-id': given } });
      expect(res.headers['request-id']).not.toBe(given);
      expect(res.headers['request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.stringify(await log.lines())).not.toContain(given);
    },
  );
});

describe('the id of an import', () => {
  it('is on every line of a bulk import request’s processing', async () => {
    const log = capture();
    const t = await openTestDatabase();
    const clock = manualClock('2025-03-01T10:00:00.000Z');
    try {
      await setupCustomers(t.db, clock);
      await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: clock().toISOString() }).execute();
      const good = await insertRequest(t.db, { submittedAt: clock().toISOString(), payload: customersPayload('C1', 'C2') });
      const bad = await insertRequest(t.db, { submittedAt: clock().toISOString(), payload: '[{"no":"C3"' });
      const config = { leaseSeconds: 300, maxAttempts: 3, retentionDays: 30, schedulerTickMs: 1000 };
      const runner = createQueueRunner({ db: t.db, config, clock, logger: log.logger, owner: 'runner-1', jobs: jobKinds(config) });
      await runner.tick();
      await runner.stop();
      const lines = await log.lines();
      for (const id of [good, bad]) {
        const about = lines.filter((l) => JSON.stringify(l).includes(id));
        expect(about.length, `lines about ${id}`).toBeGreaterThan(0);
        for (const line of about) expect(line.requestId, String(line.msg)).toBe(id);
      }
      expect(lines.find((l) => l.requestId === good)?.msg).toBe('bulk import request completed');
      expect(lines.find((l) => l.requestId === bad)?.msg).toBe('bulk import request failed');
    } finally {
      await t.cleanup();
    }
  });
});
