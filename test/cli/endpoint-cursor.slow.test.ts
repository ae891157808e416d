/**
 * `ifw endpoints cursor` as a process (the built bin/ifw.js) against a started service on a real
 * socket: shows, sets and resets an incremental endpoint's bookmark; refusals exit 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runIfw } from '../helpers/process.js';
import { API, startListeningService, type TestService } from '../helpers/service.js';

describe('ifw endpoints cursor against a service', () => {
  let t: TestService;
  let url: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    assertBuilt();
    ({ t, url, env } = await startListeningService());
    const post = (path: string, body: unknown) =>
      fetch(`${url}${API}/${path}`, {
        method: 'POST',
        headers: { ...t.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post('restApiConnections', { code: 'blog', baseUrl: 'https://api.example.com' })).status).toBe(201);
    const endpoint = { connectionCode: 'blog', path: '/posts', integrationSortingOrder: 10, queryParameters: { after: '{{cursor}}' } };
    expect((await post('restApiEndpoints', { ...endpoint, code: 'posts', cursorField: 'id', cursorFieldType: 'number' })).status).toBe(201);
  });
  afterAll(async () => t?.cleanup());

  const ifw = (...args: string[]) => runIfw(['endpoints', 'cursor', ...args, '--url', url], env, { timeoutMs: 60_000 });

  it('shows, sets and resets the bookmark; a value of another type and an unknown endpoint exit 1', async () => {
    const shown = await ifw('posts');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/Cursor field: id \(number\)/);
    expect(shown.stdout).toMatch(/Bookmark:\s+— \(the next run sends the initial value\)/);

    const set = await ifw('posts', '--set', '0042', '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ code: 'posts', cursorValue: '42' });
    expect((await ifw('posts')).stdout).toMatch(/Bookmark:\s+42/);

    const reset = await ifw('posts', '--reset');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/Bookmark:\s+— /);

    const bad = await ifw('posts', '--set', 'soon');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('400 invalidRequest: value: "soon" is not a number');
    const missing = await ifw('nothing', '--reset');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404');
  }, 300_000);
});
