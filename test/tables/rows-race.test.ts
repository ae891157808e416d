/**
 * A target table dropped while its rows are read: the read that lost the race answers 404 (or 409 when
 * a field went), never 500. Deterministic at the function (the declaration looked up, then the table
 * dropped, then the read), and over real sockets with reads running while DELETE targetTables(x) runs,
 * on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { getTargetTable } from '../../src/tables/store.js';
import { countTableRows, readTableRows } from '../../src/tables/rows.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

describe.each(BACKENDS)('reading a target table dropped meanwhile, on $name', (backend) => {
  let fresh: FreshDatabase;
  let t: TestService;
  let base: string;

  beforeAll(async () => {
    if (backend.skip) return;
    fresh = await backend.fresh();
    t = await startTestService({ databaseUrl: fresh.url, config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  });

  afterAll(async () => {
    await t?.cleanup();
    await fresh?.cleanup();
  });

  const call = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(`${base}${API}/${url}`, {
      method,
      headers: { ...t.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, json: (text === '' ? {} : JSON.parse(text)) as { error?: { code: string; message: string } } };
  };

  const createTable = async (name: string) =>
    expect(
      (
        await call('POST', 'targetTables', {
          name,
          fields: [
            { name: 'id', type: 'integer' },
            { name: 'label', type: 'text' },
          ],
          primaryKey: ['id'],
        })
      ).status,
    ).toBe(201);

  it.skipIf(backend.skip)('answers 404 when the table went between the lookup and the read', async () => {
    await createTable('gone_between');
    const table = (await getTargetTable(t.service.db.kysely, 'gone_between'))!;
    expect((await call('DELETE', "targetTables('gone_between')")).status).toBe(204);
    for (const read of [
      () => readTableRows(t.service.db.kysely, table, { filter: [], orderBy: [], skip: 0, limit: 10 }),
      () => countTableRows(t.service.db.kysely, table, []),
    ]) {
      const err = await read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(404);
      expect((err as AppError).message).toMatch(/was deleted while it was being read/);
    }
  });

  it.skipIf(backend.skip)('answers 200 or 404, never 500, to reads running while the table is deleted', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `race_${round}`;
      await createTable(name);
      const reads = Array.from({ length: 40 }, (_, i) => call('GET', `targetTables('${name}')/rows?$count=true&$top=${1 + (i % 5)}`));
      const deleted = call('DELETE', `targetTables('${name}')`);
      const answers = await Promise.all(reads);
      expect((await deleted).status).toBe(204);
      for (const answer of answers) {
        expect([200, 404]).toContain(answer.status);
        if (answer.status === 404) expect(answer.json.error?.code).toBe('notFound');
      }
      expect((await call('GET', `targetTables('${name}')/rows`)).status).toBe(404);
    }
  });
});
