/**
 * A real JWKS endpoint (node:http on 127.0.0.1, ephemeral port) serving `GET /.well-known/jwks.json`
 * from signing keys a test can rotate or break, counting requests so tests can see caching and
 * refetches. Tokens are signed with the private halves (`signToken`).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** The public key as published: `{ kty, n, e, kid, alg, use }`. */
  readonly jwk: JWK;
}

export async function createSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** Signs `claims` as a JWT with `key` (header `alg` and `kid` from the key unless overridden). */
export async function signToken(key: SigningKey, claims: JWTPayload, header: { kid?: string } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: header.kid ?? key.kid, typ: 'JWT' }).sign(key.privateKey);
}

export interface JwksServer {
  readonly origin: string;
  readonly jwksUrl: string;
  /** Keys currently published, in order; replace freely. */
  keys: SigningKey[];
  /** When set, the JWKS route answers this status instead of the keys. */
  failWith: number | null;
  /** JWKS requests received so far. */
  readonly requestCount: number;
  /** Publishes a fresh key pair under a new kid in place of the current keys, and returns it. */
  rotate(): Promise<SigningKey>;
  close(): Promise<void>;
}

export async function startJwksServer(name = 'key'): Promise<JwksServer> {
  let requestCount = 0;
  let generation = 1;
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    requestCount += 1;
    if (state.failWith !== null) {
      res.writeHead(state.failWith, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const state: JwksServer = {
    origin,
    jwksUrl: `${origin}/.well-known/jwks.json`,
    keys: [await createSigningKey(`${name}-1`)],
    failWith: null,
    get requestCount() {
      return requestCount;
    },
    async rotate() {
      generation += 1;
      const key = await createSigningKey(`${name}-${generation}`);
      state.keys = [key];
      return key;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
  return state;
}
