/**
 * Throttle on failed logins, counted per key: one key for the user name and one for the client
 * address, so that guessing many passwords for one user and trying one password against many users
 * are both slowed down. In memory, bounded, with an injected clock.
 *
 * Lockout is fixed (not exponential): after `maxFailures` failures inside `windowMs` a key is locked
 * for `lockoutMs`, then starts afresh. With the defaults that is at most 5 guesses per 15 minutes per
 * user and per address, which is slow enough against passwords of 12+ characters, while a legitimate
 * user locked out by someone else's guessing never waits longer than 15 minutes.
 */
import { createHash, type BinaryLike } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Clock } from '../core/clock.js';

export type ThrottleKey = `user:${string}` | `ip:${string}`;

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface LoginThrottle {
  /** Whether an attempt may be verified now; refused while any of the keys is locked. */
  check(keys: readonly ThrottleKey[]): ThrottleDecision;
  recordFailure(keys: readonly ThrottleKey[]): void;
  /**
   * Clears the user keys only. Address keys keep counting: otherwise someone holding one valid
   * account could reset their address's count between guesses against other accounts.
   */
  recordSuccess(keys: readonly ThrottleKey[]): void;
}

export interface LoginThrottleOptions {
  clock: Clock;
  /** Failures within the window that lock a key. Default 5. */
  maxFailures?: number;
  /** Window in which failures are counted, from the first one. Default 15 minutes. */
  windowMs?: number;
  /** How long a key stays locked. Default 15 minutes. */
  lockoutMs?: number;
  /** Most keys remembered; beyond it expired entries, then the oldest, are dropped. Default 10 000. */
  maxKeys?: number;
}

interface Entry {
  failures: number;
  windowStart: number;
  lockedUntil: number | null;
}

const MINUTE = 60_000;

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { clock, maxFailures = 5, windowMs = 15 * MINUTE, lockoutMs = 15 * MINUTE, maxKeys = 10_000 } = options;
  const entries = new Map<ThrottleKey, Entry>();
  const now = (): number => clock().getTime();

  const expired = (e: Entry, at: number): boolean => (e.lockedUntil === null ? at - e.windowStart >= windowMs : at >= e.lockedUntil);

  /** The live entry for a key, dropping it once its window or lockout is over. */
  function live(key: ThrottleKey, at: number): Entry | undefined {
    const e = entries.get(key);
    if (e !== undefined && expired(e, at)) {
      entries.delete(key);
      return undefined;
    }
    return e;
  }

  function makeRoom(at: number): void {
    if (entries.size < maxKeys) return;
    for (const [key, e] of entries) if (expired(e, at)) entries.delete(key);
    // Map iteration is insertion order, and an entry is inserted when its window starts.
    for (const key of entries.keys()) {
      if (entries.size < maxKeys) break;
      entries.delete(key);
    }
  }

  return {
    check(keys) {
      const at = now();
      let lockedUntil: number | null = null;
      for (const key of keys) {
        const until = live(key, at)?.lockedUntil ?? null;
        if (until !== null) lockedUntil = Math.max(lockedUntil ?? until, until);
      }
      if (lockedUntil === null) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((lockedUntil - at) / 1000)) };
    },
    recordFailure(keys) {
      const at = now();
      for (const key of keys) {
        let e = live(key, at);
        if (e === undefined) {
          makeRoom(at);
          e = { failures: 0, windowStart: at, lockedUntil: null };
          entries.set(key, e);
        }
        if (e.lockedUntil !== null) continue; // already locked: further failures do not extend it
        e.failures += 1;
        if (e.failures >= maxFailures) e.lockedUntil = at + lockoutMs;
      }
    },
    recordSuccess(keys) {
      for (const key of keys) if (key.startsWith('user:')) entries.delete(key);
    },
  };
}

/** Names this long are stored as a digest, so that a huge user name cannot blow up memory. */
const MAX_NAME_IN_KEY = 128;
const digest = (s: BinaryLike): string => createHash('sha256').update(s).digest('hex');

export function userKey(username: string): ThrottleKey {
  return `user:${username.length > MAX_NAME_IN_KEY ? `sha256:${digest(username)}` : username}`;
}

/**
 * IPv4 addresses count one by one; IPv6 addresses by their /64, since one client usually holds a
 * whole /64. IPv4-mapped IPv6 (`::ffff:1.2.3.4`, as Node reports IPv4 on a dual-stack socket) counts
 * as the IPv4 address.
 */
export function addressKey(address: string): ThrottleKey {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return `ip:${mapped}`;
  if (isIPv4(address)) return `ip:${address}`;
  const prefix = isIPv6(address) ? ipv6Prefix64(address) : null;
  return prefix === null ? `ip:${address}` : `ip:${prefix}::/64`;
}

export function throttleKeys(username: string, address: string): ThrottleKey[] {
  return [userKey(username), addressKey(address)];
}

/** The first four groups of an IPv6 address, expanded and lower-case; null for forms not handled. */
function ipv6Prefix64(address: string): string | null {
  const bare = address.split('%')[0] ?? '';
  if (bare.includes('.')) return null; // embedded IPv4 other than ::ffff: is rare enough to key as-is
  const [head = '', tail, ...rest] = bare.split('::');
  if (rest.length > 0) return null;
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  const groups = [...left, ...zeros, ...right];
  if (groups.length !== 8) return null;
  return groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':');
}
