/**
 * What a connection may cost the service, over raw sockets: at most IFW_MAX_CONNECTIONS are open. And
 * whose word the service takes for the client's address, scheme and host: a trusted proxy's
 * X-Forwarded-* only (IFW_TRUST_PROXY). The timeouts, which take seconds of real time, are in
 * connections.slow.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

import { connect } from '../helpers/raw-socket.js';

describe('connections at most', () => {
  it('closes connections beyond IFW_MAX_CONNECTIONS at once, and serves again when they are gone', async () => {
    const t = await startTestService({ config: { host: '127.0.0.1', port: 0, maxConnections: 3 } });
    try {
      const base = (await t.service.listen()).replace('localhost', '127.0.0.1');
      const held = await Promise.all([connect(base), connect(base), connect(base)]);
      const extra = await connect(base);
      const { afterMs } = await extra.closed;
      expect(afterMs).toBeLessThan(500);
      for (const raw of held) raw.socket.destroy();
      await Promise.all(held.map((raw) => raw.closed));
      // The server counts a closed connection out once it sees the close.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
    } finally {
      await t.cleanup();
    }
  });
});

describe('trusted proxies (IFW_TRUST_PROXY)', () => {
  const PASSWORD = 'trust-proxy-password-1';
  const basic = (password: string) => `Basic ${Buffer.from(`proxied:${password}`).toString('base64')}`;

  /** Six failed Basic sign-ins from what the service takes for one client, then the right password: 429 when they were one client. */
  async function throttledAfterFailures(t: TestService, forwardedFor: (i: number) => string): Promise<boolean> {
    for (let i = 0; i < 6; i++) {
      const res = await t.service.app.inject({
        method: 'GET',
        url: `${API}/integrations`,
        remoteAddress: '127.0.0.1',
        headers: { authorization: basic(`wrong-password-${i}`), 'x-forwarded-for': forwardedFor(i) },
      });
      expect([401, 429]).toContain(res.statusCode);
    }
    const res = await t.service.app.inject({
      method: 'GET',
      url: `${API}/integrations`,
      remoteAddress: '127.0.0.1',
      headers: { authorization: basic(PASSWORD), 'x-forwarded-for': forwardedFor(6) },
    });
    return res.statusCode === 429;
  }

  it('without it, X-Forwarded-For changes nothing: the connection is the client', async () => {
    const t = await startTestService({ config: { trustProxy: false } });
    try {
      await t.service.accounts.createUser({ userName: 'proxied', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
      // A client that sends a new X-Forwarded-For each time is still one client.
      expect(await throttledAfterFailures(t, (i) => `198.51.100.${i}`)).toBe(true);
    } finally {
      await t.cleanup();
    }
  });

  it('from a trusted proxy, the client address is the forwarded one: clients behind it are throttled apart', async () => {
    const t = await startTestService({ config: { trustProxy: ['127.0.0.1'] } });
    try {
      await t.service.accounts.createUser({ userName: 'proxied', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
      expect(await throttledAfterFailures(t, () => '198.51.100.7')).toBe(true);
      // Another client behind the same proxy signs in at once.
      const other = await t.service.app.inject({
        method: 'GET',
        url: `${API}/integrations`,
        remoteAddress: '127.0.0.1',
        headers: { authorization: basic(PASSWORD), 'x-forwarded-for': '198.51.100.8' },
      });
      expect(other.statusCode).toBe(200);
    } finally {
      await t.cleanup();
    }
  });

  it('from an address it does not trust, a forwarded scheme and host are not believed (the console refuses a mismatched Origin)', async () => {
    const t = await startTestService({ config: { trustProxy: ['10.0.0.1'] } });
    try {
      const form = await t.service.app.inject({ method: 'GET', url: '/login', remoteAddress: '127.0.0.1' });
      const cookie = String(form.headers['set-cookie']).split(';')[0]!;
      const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
      const post = (remoteAddress: string) =>
        t.service.app.inject({
          method: 'POST',
          url: '/login',
          remoteAddress,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            cookie,
            host: '127.0.0.1:8080',
            origin: 'https://console.example',
            'x-forwarded-proto': 'https',
            'x-forwarded-host': 'console.example',
          },
          payload: new URLSearchParams({ _csrf: token, userName: 'admin', password: 'not checked here' }).toString(),
        });
      // From 127.0.0.1 (not the proxy) the Origin names another site: refused before the password is looked at.
      expect((await post('127.0.0.1')).statusCode).toBe(403);
      // From the proxy, the browser's scheme and host are those it forwarded: the Origin matches.
      expect((await post('10.0.0.1')).statusCode).toBe(401);
    } finally {
      await t.cleanup();
    }
  });
});
