/**
 * Who is calling: the one function the HTTP layer asks before any route that is not public. It
 * accepts an OAuth 2.0 bearer token of a registered, enabled application, or Basic credentials of an
 * enabled service user, and answers with the principal and its permission sets. Everything else is a
 * 401 with `WWW-Authenticate`, or a 429 with `Retry-After` while a user or address is throttled.
 *
 * Both paths are fast after the first request: a validated token is remembered until it expires (at
 * most five minutes), and a verified password is remembered, keyed by an HMAC of the credentials
 * under a per-process key, for as long as the stored hash is unchanged. So argon2id (tens of
 * milliseconds by design) and signature checks run once per caller, not once per request. A disabled
 * user or application is refused within the directory's few seconds either way.
 *
 * Password attempts that need a verification run one at a time per user name and per address, so
 * that the throttle counts every failure before it lets the next guess through, however many
 * requests arrive together.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import type { Directory } from './directory.js';
import { TokenError, wwwAuthenticate, type TokenPrincipal, type TokenValidator } from './jwt.js';
import type { Principal, UserCredentials } from './model.js';
import { parseBasicAuthorization, passwordFits, verifyPassword, type HashVerifier } from './passwords.js';
import { createLoginThrottle, throttleKeys, type LoginThrottle, type ThrottleKey } from './throttle.js';

export interface Authenticator {
  /** The principal behind an `Authorization` header sent from `address`; throws AppError 401/403/429. */
  authenticate(authorization: string | undefined, address: string): Promise<Principal>;
  /**
   * A user name and password typed into the console's sign-in form: the same verification, throttle
   * and messages as Basic authentication, whether or not Basic is accepted on the API. Answers the
   * user as verified, with the identity a console session keeps.
   */
  signIn(userName: string, password: string, address: string): Promise<SignedInUser>;
}

/** A user whose password was just verified: who they are (never reused) and the security stamp the password was verified under. */
export interface SignedInUser {
  readonly principal: Principal;
  readonly userId: string;
  readonly securityStamp: string;
}

export interface AuthenticatorOptions {
  readonly directory: Directory;
  readonly clock: Clock;
  /** Basic authentication with service users. */
  readonly basic: boolean;
  /** Bearer token validation; undefined when no token issuer is configured. */
  readonly tokens: TokenValidator | undefined;
  /** Default: 5 failures per 15 minutes per user and per address. */
  readonly throttle?: LoginThrottle;
  /** The argon2id verification (a parameter so tests can observe which hash was checked). */
  readonly verifier?: HashVerifier;
}

const REMEMBER_MS = 5 * 60_000;
const MAX_REMEMBERED = 10_000;

/** A bounded map of things remembered until a time; the oldest entry goes when it is full. */
function memory<T>() {
  const entries = new Map<string, { value: T; until: number }>();
  return {
    get(key: string, at: number): T | undefined {
      const hit = entries.get(key);
      if (hit === undefined) return undefined;
      if (hit.until > at) return hit.value;
      entries.delete(key);
      return undefined;
    },
    set(key: string, value: T, until: number): void {
      if (entries.size >= MAX_REMEMBERED) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(key, { value, until });
    },
  };
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { directory, clock, tokens } = options;
  const throttle = options.throttle ?? createLoginThrottle({ clock });
  const tokenMemory = memory<TokenPrincipal>();
  const passwordMemory = memory<string>();
  const hmacKey = randomBytes(32);

  const challenges = [
    ...(tokens === undefined ? [] : [wwwAuthenticate()]),
    ...(options.basic ? ['Basic realm="ifw", charset="UTF-8"'] : []),
  ];
  const challenge = challenges.length > 0 ? challenges.join(', ') : wwwAuthenticate();
  const unauthorized = (message: string, header = challenge) => new AppError(401, 'unauthorized', message, { 'www-authenticate': header });

  async function bearer(header: string): Promise<Principal> {
    const token = /^\s*bearer +(\S+)\s*$/i.exec(header)?.[1];
    if (token === undefined) throw unauthorized('The bearer token is missing or malformed: send Authorization: Bearer <access token>.');
    if (tokens === undefined) throw unauthorized('Bearer tokens are not accepted: no token issuer is configured (IFW_OAUTH_ISSUERS).');
    const at = clock().getTime();
    let validated = tokenMemory.get(token, at);
    if (validated === undefined) {
      try {
        validated = await tokens.validate(token);
      } catch (err) {
        if (err instanceof TokenError)
          throw new AppError(err.status, err.code, `${capitalize(err.message)}.`, { 'www-authenticate': wwwAuthenticate(err) });
        throw err;
      }
      tokenMemory.set(token, validated, Math.min(validated.expiresAt.getTime(), at + REMEMBER_MS));
    }
    const application = await directory.application(validated.appId);
    if (application === undefined) {
      throw new AppError(
        403,
        'forbidden',
        `Application '${validated.appId}' is not registered in the service; an administrator registers it (applications, or ifw apps add).`,
      );
    }
    if (application.issuer === null ? tokens.issuers.length > 1 : application.issuer !== validated.issuer) {
      throw new AppError(
        403,
        'forbidden',
        application.issuer === null
          ? `Application '${validated.appId}' is registered without an issuer, and the service accepts tokens of ${tokens.issuers.length} issuers; an administrator names its issuer (applications('${validated.appId}') {"issuer": …}, or ifw apps set-issuer).`
          : `Application '${validated.appId}' is registered for another issuer than the one that signed this token.`,
      );
    }
    if (!application.enabled) throw new AppError(403, 'forbidden', `Application '${validated.appId}' is disabled.`);
    return { kind: 'application', name: application.clientId, permissionSets: application.permissionSets };
  }

  const credentialKey = (userName: string, password: string) =>
    createHmac('sha256', hmacKey).update(userName).update('\0').update(password).digest('base64');
  /** Whether these credentials were verified against the user's current hash. */
  const remembered = (user: UserCredentials, key: string, at: number): boolean => passwordMemory.get(key, at) === user.passwordHash;
  const oneAtATime = serializer();

  function refuseWhileThrottled(keys: readonly ThrottleKey[]): void {
    const decision = throttle.check(keys);
    if (decision.allowed) return;
    throw new AppError(
      429,
      'tooManyRequests',
      `Too many failed sign-ins for this user or from this address; try again in ${decision.retryAfterSeconds} seconds.`,
      {
        'retry-after': String(decision.retryAfterSeconds),
      },
    );
  }

  /**
   * Checks, verifies and records one attempt while no other attempt for the same user name or from
   * the same address is under way. Without that, requests sent together would all pass the throttle
   * check before the first failure is recorded, and a burst could try any number of passwords.
   */
  function verifyAttempt(username: string, password: string, keys: readonly ThrottleKey[], key: string): Promise<UserCredentials> {
    return oneAtATime(keys, async () => {
      // Attempts that went before may have locked these keys, or verified and remembered these credentials.
      refuseWhileThrottled(keys);
      const user = await directory.user(username);
      const at = clock().getTime();
      if (user !== undefined && remembered(user, key, at)) return user;
      const ok = await verifyPassword(user?.passwordHash, password, options.verifier);
      if (!ok || user === undefined) {
        throttle.recordFailure(keys);
        throw unauthorized('The user name or password is not valid.');
      }
      passwordMemory.set(key, user.passwordHash, at + REMEMBER_MS);
      return user;
    });
  }

  async function basic(header: string, address: string): Promise<SignedInUser> {
    if (!options.basic) throw unauthorized('Basic authentication is switched off (IFW_BASIC_AUTH=false); send an OAuth 2.0 bearer token.');
    const credentials = parseBasicAuthorization(header);
    if (credentials === null)
      throw unauthorized('The Basic credentials are malformed: send Authorization: Basic base64(<user name>:<password>).');
    return password(credentials.username, credentials.password, address);
  }

  async function password(username: string, secret: string, address: string): Promise<SignedInUser> {
    const keys = throttleKeys(username, address);
    refuseWhileThrottled(keys);
    // No password is that long: refused before it is normalised, hashed or even keyed, counted as a failure.
    if (!passwordFits(secret)) {
      throttle.recordFailure(keys);
      throw unauthorized('The user name or password is not valid.');
    }
    const key = credentialKey(username, secret);
    // Remembered credentials need no verification, so they need not wait for attempts under way.
    const known = await directory.user(username);
    const user =
      known !== undefined && remembered(known, key, clock().getTime()) ? known : await verifyAttempt(username, secret, keys, key);
    throttle.recordSuccess(keys);
    if (!user.enabled) throw unauthorized(`User '${user.userName}' is disabled.`);
    return {
      principal: { kind: 'user', name: user.userName, permissionSets: user.permissionSets },
      userId: user.userId,
      securityStamp: user.securityStamp,
    };
  }

  return {
    async authenticate(authorization, address) {
      if (authorization === undefined || authorization.trim() === '') {
        throw unauthorized('This route needs credentials: an OAuth 2.0 bearer token or Basic authentication.');
      }
      const scheme = /^\s*(\S+)/.exec(authorization)?.[1]?.toLowerCase() ?? '';
      if (scheme === 'bearer') return bearer(authorization);
      if (scheme === 'basic') return (await basic(authorization, address)).principal;
      throw unauthorized('The Authorization scheme is not supported: use Bearer or Basic.');
    },
    signIn: password,
  };
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Runs tasks one at a time per key: a task starts once every earlier task sharing any of its keys
 * has settled (first come, first served; no deadlock, since a task only waits for earlier ones).
 */
function serializer() {
  const tails = new Map<string, Promise<void>>();
  return <T>(keys: readonly string[], task: () => Promise<T>): Promise<T> => {
    const earlier = keys.flatMap((k) => tails.get(k) ?? []);
    const result = Promise.all(earlier).then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    for (const k of keys) tails.set(k, tail);
    void tail.then(() => {
      for (const k of keys) if (tails.get(k) === tail) tails.delete(k);
    });
    return result;
  };
}
