/**
 * `ifw submit --wait` and `ifw status --wait` as processes (the built bin/ifw.js) against real HTTP
 * servers with a short interval: what they print, their exit codes, and the polls they make. The
 * schedule itself is in polling-schedule.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_TIMED_OUT } from '../../src/cli/client-output.js';
import { assertBuilt, ROOT, runIfw } from '../helpers/process.js';

const PAYLOAD_FILE = path.join(ROOT, 'examples/customers-payload.json');
const REQUEST_ID = '0190a000-0000-7000-8000-000000000001';

describe('ifw submit --wait and ifw status --wait against a service', () => {
  let server: Server | undefined;
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  /** A service that accepts a submission and answers each poll with the next of `polls` (the last repeats). */
  async function fakeService(polls: ((res: ServerResponse, req: IncomingMessage) => void)[]): Promise<{ url: string; gets: () => number }> {
    let gets = 0;
    server = createServer((req, res) => {
      req.resume();
      if (req.method === 'POST') {
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ requestId: REQUEST_ID, status: 'Pending' }));
        return;
      }
      polls[Math.min(gets++, polls.length - 1)]!(res, req);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, gets: () => gets };
  }
  const json = (status: number, body: unknown) => (res: ServerResponse) =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const request = (status: string) => json(200, { requestId: REQUEST_ID, status, recordCount: 0, errorMessage: '' });

  it('says the request id on stderr at once, survives a dropped connection and a 503, and prints the ended request', async () => {
    const service = await fakeService([
      (_res, req) => req.socket.destroy(),
      json(503, { error: { code: 'serviceUnavailable', message: 'The database is busy; try again shortly.' } }),
      request('Processing'),
      request('Completed'),
    ]);
    const result = await runIfw(
      ['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', service.url, '--wait', '--interval', '0.05', '--json'],
      {},
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`ifw: request ${REQUEST_ID} accepted; follow it with: ifw status ${REQUEST_ID}`);
    expect(result.stderr).toMatch(/poll 1 failed \(cannot reach the service .*\); trying again/);
    expect(result.stderr).toContain('poll 2 failed (the service answered 503); trying again');
    expect(result.stdout).toContain('"status": "Completed"');
    expect(service.gets()).toBe(4);
  });

  it('exits 2, printing the last status and how to resume, when the request has not ended within the attempts', async () => {
    const service = await fakeService([request('Processing')]);
    const result = await runIfw(
      ['status', REQUEST_ID, '--url', service.url, '--wait', '--interval', '0.05', '--max-attempts', '3', '--json'],
      {},
    );
    expect(result.code).toBe(EXIT_TIMED_OUT);
    expect(JSON.parse(result.stdout)).toMatchObject({ requestId: REQUEST_ID, status: 'Processing' });
    expect(result.stderr).toContain(`request ${REQUEST_ID} has not ended after 3 polls`);
    expect(result.stderr).toContain(`resume with: ifw status ${REQUEST_ID} --wait`);
    expect(service.gets()).toBe(3);
  });

  it('exits 1 for a Failed request', async () => {
    const service = await fakeService([request('Failed')]);
    const result = await runIfw(['status', REQUEST_ID, '--url', service.url, '--wait', '--interval', '0.05', '--json'], {});
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'Failed' });
  });

  it('refuses a wait option it cannot use before submitting anything', async () => {
    const service = await fakeService([request('Completed')]);
    const result = await runIfw(['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', service.url, '--wait', '--interval', 'soon'], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--interval must be a number of seconds above 0');
    expect(service.gets()).toBe(0);
  });
});
