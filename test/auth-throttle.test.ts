import { describe, expect, it } from 'vitest';
import { addressKey, createLoginThrottle, throttleKeys, userKey, type LoginThrottleOptions } from '../src/auth/throttle.js';
import { manualClock } from '../src/core/clock.js';

const MINUTE = 60_000;

function setup(options: Partial<LoginThrottleOptions> = {}) {
  const clock = manualClock('2025-01-01T00:00:00Z');
  const throttle = createLoginThrottle({ clock, ...options });
  const fail = (username: string, address: string, times = 1): void => {
    for (let i = 0; i < times; i++) throttle.recordFailure(throttleKeys(username, address));
  };
  const check = (username: string, address: string) => throttle.check(throttleKeys(username, address));
  return { clock, throttle, fail, check };
}

describe('login throttle', () => {
  it('allows a key with no failures', () => {
    const { check } = setup();
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
  });

  it('still allows after 4 failures', () => {
    const { fail, check } = setup();
    fail('alice', '10.0.0.1', 4);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
  });

  it('locks the user after 5 failures, for 15 minutes, with Retry-After in whole seconds', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 5);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 900 });
    clock.advance(1_500);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 899 }); // 898.5 rounded up
  });

  it('locks the user from every address, not only the guessing one', () => {
    const { fail, check } = setup();
    fail('alice', '10.0.0.1', 5);
    expect(check('alice', '10.0.0.2')).toMatchObject({ allowed: false });
    expect(check('bob', '10.0.0.2')).toEqual({ allowed: true });
  });

  it('locks the address after 5 failures spread over different users', () => {
    const { fail, check } = setup();
    for (const user of ['u1', 'u2', 'u3', 'u4', 'u5']) fail(user, '10.0.0.1');
    expect(check('someone-else', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 900 });
    expect(check('someone-else', '10.0.0.2')).toEqual({ allowed: true });
  });

  it('answers a Retry-After of at least 1 second in the last moments of a lockout', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 5);
    clock.advance(15 * MINUTE - 1);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('reports the longest remaining lockout when several keys are locked', () => {
    const { fail, check, clock } = setup();
    for (const user of ['u1', 'u2', 'u3', 'u4', 'u5']) fail(user, '10.0.0.1'); // address locked at t=0
    clock.advance(5 * MINUTE);
    fail('alice', '10.0.0.2', 5); // alice locked at t=5min
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 900 });
  });

  it('unlocks when the lockout is over and counts afresh', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 5);
    clock.advance(15 * MINUTE);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
    fail('alice', '10.0.0.1', 4);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
  });

  it('does not extend a lockout with failures recorded while locked', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 5);
    clock.advance(10 * MINUTE);
    fail('alice', '10.0.0.1', 3);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 300 });
  });

  it('forgets failures older than the 15-minute window', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 4);
    clock.advance(15 * MINUTE);
    fail('alice', '10.0.0.1', 4);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
  });

  it('counts failures inside the window even when spread out', () => {
    const { fail, check, clock } = setup();
    for (let i = 0; i < 5; i++) {
      fail('alice', '10.0.0.1');
      clock.advance(3 * MINUTE - 1);
    }
    expect(check('alice', '10.0.0.1')).toMatchObject({ allowed: false });
  });

  it('clears the user count on success, but not the address count', () => {
    const { fail, check, throttle } = setup();
    fail('alice', '10.0.0.1', 4);
    throttle.recordSuccess(throttleKeys('alice', '10.0.0.1'));
    fail('alice', '10.0.0.2', 4); // the user count started again: 4 < 5
    expect(check('alice', '10.0.0.3')).toEqual({ allowed: true });
    fail('bob', '10.0.0.1'); // the address count kept its 4: this is the 5th
    expect(check('carol', '10.0.0.1')).toMatchObject({ allowed: false });
  });

  it('honours custom limits', () => {
    const { fail, check } = setup({ maxFailures: 2, lockoutMs: 30_000 });
    fail('alice', '10.0.0.1', 2);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 30 });
  });

  it('keeps at most maxKeys keys, dropping the oldest first', () => {
    const { throttle } = setup({ maxKeys: 3, maxFailures: 1 });
    throttle.recordFailure(['user:a']);
    throttle.recordFailure(['user:b']);
    throttle.recordFailure(['user:c']);
    throttle.recordFailure(['user:d']);
    expect(throttle.check(['user:a'])).toEqual({ allowed: true }); // evicted
    for (const k of ['user:b', 'user:c', 'user:d'] as const) expect(throttle.check([k])).toMatchObject({ allowed: false });
  });

  it('drops expired keys before live ones when full', () => {
    const { throttle, clock } = setup({ maxKeys: 3, maxFailures: 1 });
    throttle.recordFailure(['user:old']); // locked until t=15min
    clock.advance(10 * MINUTE);
    throttle.recordFailure(['user:a']);
    throttle.recordFailure(['user:b']);
    clock.advance(6 * MINUTE); // user:old has expired, user:a and user:b are still locked
    throttle.recordFailure(['user:c']);
    for (const k of ['user:a', 'user:b', 'user:c'] as const) expect(throttle.check([k])).toMatchObject({ allowed: false });
  });

  it('stays bounded under a flood of distinct keys: the earliest are forgotten, the latest remembered', () => {
    const { throttle } = setup({ maxKeys: 100 });
    for (let i = 0; i < 10_000; i++) throttle.recordFailure([userKey(`user${i}`)]);
    for (let j = 0; j < 4; j++) throttle.recordFailure([userKey('user9999')]);
    for (let j = 0; j < 4; j++) throttle.recordFailure([userKey('user0')]);
    expect(throttle.check([userKey('user9999')])).toMatchObject({ allowed: false });
    expect(throttle.check([userKey('user0')])).toEqual({ allowed: true });
  });
});

describe('throttle keys', () => {
  it.each([
    ['an IPv4 address', '127.0.0.1', 'ip:127.0.0.1'],
    ['an IPv4-mapped IPv6 address as IPv4', '::ffff:127.0.0.1', 'ip:127.0.0.1'],
    ['IPv6 loopback by its /64', '::1', 'ip:0:0:0:0::/64'],
    ['an IPv6 address by its /64', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', 'ip:2001:db8:1:2::/64'],
    ['a compressed IPv6 address by its /64', '2001:DB8::1', 'ip:2001:db8:0:0::/64'],
    ['an IPv6 address with a zone', 'fe80::1%eth0', 'ip:fe80:0:0:0::/64'],
    ['something that is not an address, as given', 'unknown', 'ip:unknown'],
  ])('keys %s', (_, address, expected) => {
    expect(addressKey(address)).toBe(expected);
  });

  it('puts two addresses of the same IPv6 /64 under one key', () => {
    expect(addressKey('2001:db8:1:2::1')).toBe(addressKey('2001:db8:1:2:ffff::9'));
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
  });

  it('keys a user by name, and a very long name by its digest', () => {
    expect(userKey('alice')).toBe('user:alice');
    const long = userKey('x'.repeat(100_000));
    expect(long).toMatch(/^user:sha256:[0-9a-f]{64}$/);
    expect(userKey('x'.repeat(100_001))).not.toBe(long);
  });

  it('gives the user key and the address key, in that order', () => {
    expect(throttleKeys('alice', '10.0.0.1')).toEqual(['user:alice', 'ip:10.0.0.1']);
  });
});
