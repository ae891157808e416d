/**
 * Throttle on failed sign-ins, without lock-out (OWASP's authentication guidance): failures are counted
 * per user name *and address* pair, and per address, and past a number of free failures each further
 * failure makes that key wait longer before the next attempt is verified: 1 s, 2 s, 4 s, … up to
 * 15 minutes. So guessing one user's password from one address slows to one guess per 15 minutes,
 * spraying one password over many users from one address is slowed by the address key, and nobody can
 * lock a user out: the same user from another address has keys of its own. In memory, bounded, with
 * an injected clock.
 */
import { createHash, type BinaryLike } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Clock } from '../core/clock.js';

export type ThrottleKey = `pair:${string}` | `ip:${string}`;

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface LoginThrottle {
  /** Whether an attempt may be verified now; refused while any of the keys is waiting. */
  check(keys: readonly ThrottleKey[]): ThrottleDecision;
  recordFailure(keys: readonly ThrottleKey[]): void;
  /**
   * Clears the user-and-address keys only. Address keys keep counting: otherwise someone holding one
   * valid account could reset their address's count between guesses against other accounts.
   */
  recordSuccess(keys: readonly ThrottleKey[]): void;
}

export interface LoginThrottleOptions {
  clock: Clock;
  /** Failures of one user name from one address before the first delay. Default 5. */
  pairFreeFailures?: number;
  /** Failures from one address, over every user name, before the first delay. Default 20. */
  addressFreeFailures?: number;
  /** The first delay; each further failure doubles it. Default 1 second. */
  firstDelayMs?: number;
  /** The longest delay. Default 15 minutes. */
  maxDelayMs?: number;
  /** A key is forgotten this long after its last failure (once it no longer waits). Default 1 hour. */
  forgetAfterMs?: number;
  /** Most keys remembered; beyond it forgotten entries, then the oldest, are dropped. Default 10 000. */
  maxKeys?: number;
}

interface Entry {
  failures: number;
  lastFailure: number;
  /** No attempt is verified before this time (ms); 0: none is waiting. */
  waitUntil: number;
}

const MINUTE = 60_000;

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const {
    clock,
    pairFreeFailures = 5,
    addressFreeFailures = 20,
    firstDelayMs = 1000,
    maxDelayMs = 15 * MINUTE,
    forgetAfterMs = 60 * MINUTE,
    maxKeys = 10_000,
  } = options;
  const entries = new Map<ThrottleKey, Entry>();
  const now = (): number => clock().getTime();

  const forgotten = (e: Entry, at: number): boolean => at >= e.waitUntil && at - e.lastFailure >= forgetAfterMs;
  const freeFailures = (key: ThrottleKey): number => (key.startsWith('ip:') ? addressFreeFailures : pairFreeFailures);
  /** The wait after the n-th failure: none within the free failures, then doubling up to the maximum. */
  const delayAfter = (failures: number, free: number): number =>
    failures < free ? 0 : Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(failures - free, 40));

  /** The live entry for a key, dropping it once it is forgotten. */
  function live(key: ThrottleKey, at: number): Entry | undefined {
    const e = entries.get(key);
    if (e !== undefined && forgotten(e, at)) {
      entries.delete(key);
      return undefined;
    }
    return e;
  }

  function makeRoom(at: number): void {
    if (entries.size < maxKeys) return;
    for (const [key, e] of entries) if (forgotten(e, at)) entries.delete(key);
    // Map iteration is insertion order, and an entry is inserted at its first failure.
    for (const key of entries.keys()) {
      if (entries.size < maxKeys) break;
      entries.delete(key);
    }
  }

  return {
    check(keys) {
      const at = now();
      let waitUntil = 0;
      for (const key of keys) waitUntil = Math.max(waitUntil, live(key, at)?.waitUntil ?? 0);
      if (waitUntil <= at) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((waitUntil - at) / 1000)) };
    },
    recordFailure(keys) {
      const at = now();
      for (const key of keys) {
        let e = live(key, at);
        if (e === undefined) {
          makeRoom(at);
          e = { failures: 0, lastFailure: at, waitUntil: 0 };
          entries.set(key, e);
        }
        if (e.waitUntil > at) continue; // refused attempts are not verified, so not counted
        e.failures += 1;
        e.lastFailure = at;
        const delay = delayAfter(e.failures, freeFailures(key));
        if (delay > 0) e.waitUntil = at + delay;
      }
    },
    recordSuccess(keys) {
      for (const key of keys) if (key.startsWith('pair:')) entries.delete(key);
    },
  };
}

/** Names this long are stored as a digest, so that a huge user name cannot blow up memory. */
const MAX_NAME_IN_KEY = 128;
const digest = (s: BinaryLike): string => createHash('sha256').update(s).digest('hex');

/** The key of one user name tried from one address (the address as `addressKey` counts it). */
export function pairKey(username: string, address: string): ThrottleKey {
  const name = username.length > MAX_NAME_IN_KEY ? `sha256:${digest(username)}` : username;
  return `pair:${addressKey(address).slice('ip:'.length)}|${name}`;
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
  return [pairKey(username, address), addressKey(address)];
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
