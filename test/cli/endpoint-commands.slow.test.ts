/**
 * `ifw endpoints detect-pagination` as a process (the built bin/ifw.js) against a started service on a
 * real socket and a real paging API: the proposal and the problems as lines, the service's JSON with
 * --json, and the exit codes (0 no problems, 1 problems, an unknown endpoint, or no service).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { API, startListeningService, type TestService } from '../helpers/service.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { assertBuilt, runIfw } from '../helpers/process.js';

describe('ifw endpoints detect-pagination against a service', () => {
  let t: TestService;
  let server: PagingServer;
  let url: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    assertBuilt();
    server = await startPagingServer({ records: 23, pageSize: 5 });
    ({ t, url, env } = await startListeningService({ secretKey: 'cli-detect-key' }));
    const post = (path: string, payload: object) => t.inject({ method: 'POST', url: `${API}/${path}`, payload });
    expect((await post('restApiConnections', { code: 'cli', baseUrl: server.origin })).statusCode).toBe(201);
    await applyConfig(
      t.service.db,
      {
        targetTables: [{ name: 'cli_detect', primaryKey: ['id'], fields: [{ name: 'id', type: 'integer' }] }],
        integrations: [
          {
            sortingOrder: 900,
            name: 'CLI detect',
            type: 'restApi',
            targetTable: 'cli_detect',
            fields: [{ fieldNo: 1, title: 'Id', sourcePath: 'id' }],
            mappings: [{ fieldNo: 1, targetField: 'id', required: true }],
          },
        ],
      },
      systemClock,
    );
    for (const [code, extra] of [
      ['cli.fits', { paginationType: 'nextLink', nextLinkJsonPath: '@odata.nextLink', responseDataPath: 'value', pageSize: 5 }],
      ['cli.wrong', { paginationType: 'pageNumber', pageParameterName: 'page', pageSize: 10, responseDataPath: 'data' }],
    ] as const) {
      const path = code === 'cli.fits' ? '/odata/Customers' : '/page-number';
      const res = await post('restApiEndpoints', { code, connectionCode: 'cli', path, integrationSortingOrder: 900, ...extra });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.cleanup();
    await server?.close();
  });

  const ifw = (...args: string[]) => runIfw(['endpoints', 'detect-pagination', ...args, '--url', url], env, { timeoutMs: 60_000 });

  it('prints the proposal and its evidence; settings that fit exit 0', async () => {
    const lines = await ifw('cli.fits');
    expect(lines.code, lines.stderr).toBe(0);
    expect(lines.stdout).toContain('paginationType: "nextLink"');
    expect(lines.stdout).toContain('nextLinkJsonPath: "@odata.nextLink"');
    expect(lines.stdout).toContain('a next link at "@odata.nextLink"');
    expect(lines.stdout).toContain("Check: the endpoint's settings agree with what the API showed.");
  }, 120_000);

  it('a wrong Page Size is a problem with its remedy, exit 1; --json prints the answer', async () => {
    const lines = await ifw('cli.wrong');
    expect(lines.code).toBe(1);
    expect(lines.stdout).toContain(
      'Only the first page is imported: Page Size 10 but the API returned 5 records: only the first page would be imported',
    );
    expect(lines.stdout).toContain('Remedy: Match Page Size: set it to 5');
    const json = await ifw('cli.wrong', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, proposal: { paginationType: 'pageNumber', pageSize: 5 } });
  }, 120_000);

  it('an unknown endpoint exits 1 with the service error', async () => {
    const unknown = await ifw('nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("404 notFound: No REST API endpoint with code 'nope'.");
  }, 120_000);
});
