/**
 * The connection timeouts, over raw sockets (the server's own timers, waited out in real time): a request
 * must arrive within IFW_REQUEST_TIMEOUT_SECONDS, a connection silent for IFW_IDLE_TIMEOUT_SECONDS while
 * a request arrives (or before its first) is closed, while an answer that takes long to work out is
 * waited for.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

import { connect } from '../helpers/raw-socket.js';

describe('timeouts', () => {
  let t: TestService;
  let base: string;
  let slowApi: http.Server;
  let slowOrigin: string;

  beforeAll(async () => {
    t = await startTestService({
      config: { host: '127.0.0.1', port: 0, idleTimeoutSeconds: 1, requestTimeoutSeconds: 3, keepAliveTimeoutSeconds: 1 },
    });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    // A REST API that takes 2.5 s to answer: longer than the idle timeout.
    slowApi = http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'), 2500);
    });
    await new Promise<void>((resolve) => slowApi.listen(0, '127.0.0.1', resolve));
    slowOrigin = `http://127.0.0.1:${(slowApi.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    slowApi?.closeAllConnections();
    await new Promise((resolve) => slowApi?.close(resolve));
    await t?.cleanup();
  });

  it('closes a connection whose body stops arriving, at the idle timeout (1 s)', async () => {
    const raw = await connect(base);
    raw.socket.write(
      `POST ${API}/bulkImportRequests HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.headers.authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"integ`,
    );
    const { afterMs } = await raw.closed;
    expect(afterMs).toBeGreaterThanOrEqual(900);
    expect(afterMs).toBeLessThan(2500);
  });

  it('closes a connection that never sends a request, at the idle timeout', async () => {
    const { afterMs } = await (await connect(base)).closed;
    expect(afterMs).toBeGreaterThanOrEqual(900);
    expect(afterMs).toBeLessThan(2500);
  });

  it('answers 408 and closes a body that drips in forever, at the request timeout (3 s)', async () => {
    const raw = await connect(base);
    raw.socket.write(
      `POST ${API}/bulkImportRequests HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.headers.authorization}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
    );
    // A byte every 300 ms: never idle, never done.
    const drip = setInterval(() => raw.socket.writable && raw.socket.write(' '), 300);
    try {
      const { afterMs, received } = await raw.closed;
      expect(afterMs).toBeGreaterThanOrEqual(2900);
      expect(afterMs).toBeLessThan(5500);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(drip);
    }
  });

  it('waits for an answer that takes longer than the idle timeout to work out (a preview of a slow API)', async () => {
    const headers = { ...t.headers, 'content-type': 'application/json' };
    const created = await fetch(`${base}${API}/restApiConnections`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code: 'slow', baseUrl: slowOrigin }),
    });
    expect(created.status).toBe(201);
    const started = performance.now();
    const tested = await fetch(`${base}${API}/restApiConnections('slow')/Microsoft.NAV.testConnection`, {
      method: 'POST',
      headers: t.headers,
    });
    expect(tested.status).toBe(200);
    expect(await tested.json()).toMatchObject({ ok: true, status: 200 });
    expect(performance.now() - started).toBeGreaterThan(2000);
  });
});
