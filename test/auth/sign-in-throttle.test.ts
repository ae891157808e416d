import { describe, expect, it } from 'vitest';
import { addressKey, createLoginThrottle, pairKey, throttleKeys, type LoginThrottleOptions } from '../../src/auth/throttle.js';
import { manualClock } from '../../src/core/clock.js';

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

  it('still allows after 4 failures of one user from one address', () => {
    const { fail, check } = setup();
    fail('alice', '10.0.0.1', 4);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
  });

  it('makes the pair wait 1 s after the 5th failure, then twice as long after each further one, up to 15 minutes', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 5);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      clock.advance(15 * MINUTE);
      expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
      fail('alice', '10.0.0.1');
      const decision = check('alice', '10.0.0.1');
      waits.push(decision.allowed ? 0 : decision.retryAfterSeconds);
    }
    expect(waits).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
  });

  it('never locks the user out: the same user from another address signs in while an attacker keeps failing', () => {
    const { fail, check, clock } = setup();
    for (let i = 0; i < 200; i++) {
      fail('admin', '203.0.113.66');
      clock.advance(16 * MINUTE); // the attacker waits out every delay
    }
    expect(check('admin', '198.51.100.7')).toEqual({ allowed: true });
    expect(check('admin', '203.0.113.66')).toEqual({ allowed: true }); // its wait is over, one more guess...
    fail('admin', '203.0.113.66');
    expect(check('admin', '203.0.113.66')).toEqual({ allowed: false, retryAfterSeconds: 900 }); // ...then 15 minutes
    expect(check('admin', '198.51.100.7')).toEqual({ allowed: true });
  });

  it('slows an address spraying passwords over many users after 20 failures, leaving other addresses free', () => {
    const { fail, check } = setup();
    for (let i = 0; i < 19; i++) fail(`user${i}`, '10.0.0.1');
    expect(check('someone-else', '10.0.0.1')).toEqual({ allowed: true });
    fail('user19', '10.0.0.1');
    expect(check('someone-else', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(check('someone-else', '10.0.0.2')).toEqual({ allowed: true });
  });

  it('reports the longest remaining wait when several keys wait', () => {
    const { fail, check, throttle, clock } = setup();
    fail('alice', '10.0.0.1', 5);
    clock.advance(1000);
    fail('alice', '10.0.0.1');
    clock.advance(2000);
    fail('alice', '10.0.0.1'); // the pair waits 4 s
    for (let i = 0; i < 13; i++) throttle.recordFailure([addressKey('10.0.0.1')]); // the address: 20 failures, 1 s
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 4 });
  });

  it('does not count failures recorded while a key waits (those attempts were never verified)', () => {
    const { fail, check } = setup();
    fail('alice', '10.0.0.1', 5);
    fail('alice', '10.0.0.1', 10);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('forgets a key an hour after its last failure', () => {
    const { fail, check, clock } = setup();
    fail('alice', '10.0.0.1', 8);
    clock.advance(60 * MINUTE);
    fail('alice', '10.0.0.1', 4);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
  });

  it('keeps counting failures spread out within the hour', () => {
    const { fail, check, clock } = setup();
    for (let i = 0; i < 5; i++) {
      fail('alice', '10.0.0.1');
      clock.advance(50 * MINUTE);
    }
    clock.advance(-50 * MINUTE);
    expect(check('alice', '10.0.0.1')).toMatchObject({ allowed: false });
  });

  it('clears the pair count on success, but not the address count', () => {
    const { fail, check, throttle } = setup();
    fail('alice', '10.0.0.1', 4);
    throttle.recordSuccess(throttleKeys('alice', '10.0.0.1'));
    fail('alice', '10.0.0.1', 4); // the pair count started again: 4 < 5
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: true });
    for (let i = 0; i < 12; i++) fail(`u${i}`, '10.0.0.1'); // the address kept its 8: these make 20
    expect(check('carol', '10.0.0.1')).toMatchObject({ allowed: false });
  });

  it('honours custom limits', () => {
    const { fail, check } = setup({ pairFreeFailures: 2, firstDelayMs: 30_000 });
    fail('alice', '10.0.0.1', 2);
    expect(check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 30 });
  });

  it('keeps at most maxKeys keys, dropping the oldest first', () => {
    const { throttle } = setup({ maxKeys: 3, addressFreeFailures: 1 });
    throttle.recordFailure(['ip:a']);
    throttle.recordFailure(['ip:b']);
    throttle.recordFailure(['ip:c']);
    throttle.recordFailure(['ip:d']);
    expect(throttle.check(['ip:a'])).toEqual({ allowed: true }); // evicted
    for (const k of ['ip:b', 'ip:c', 'ip:d'] as const) expect(throttle.check([k])).toMatchObject({ allowed: false });
  });

  it('drops forgotten keys before live ones when full', () => {
    const { throttle, clock } = setup({ maxKeys: 3, addressFreeFailures: 1, firstDelayMs: 30 * MINUTE, maxDelayMs: 30 * MINUTE });
    throttle.recordFailure(['ip:old']); // waits until t=30min, forgotten at t=60min
    clock.advance(40 * MINUTE);
    throttle.recordFailure(['ip:a']);
    throttle.recordFailure(['ip:b']);
    clock.advance(21 * MINUTE); // ip:old is forgotten, ip:a and ip:b still wait
    throttle.recordFailure(['ip:c']);
    for (const k of ['ip:a', 'ip:b', 'ip:c'] as const) expect(throttle.check([k])).toMatchObject({ allowed: false });
  });

  it('stays bounded under a flood of distinct keys: the earliest are forgotten, the latest remembered', () => {
    const { throttle } = setup({ maxKeys: 100 });
    for (let i = 0; i < 10_000; i++) throttle.recordFailure([pairKey(`user${i}`, '10.0.0.1')]);
    for (let j = 0; j < 4; j++) throttle.recordFailure([pairKey('user9999', '10.0.0.1')]);
    for (let j = 0; j < 4; j++) throttle.recordFailure([pairKey('user0', '10.0.0.1')]);
    expect(throttle.check([pairKey('user9999', '10.0.0.1')])).toMatchObject({ allowed: false });
    expect(throttle.check([pairKey('user0', '10.0.0.1')])).toEqual({ allowed: true });
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

  it('keys a user name with the address it is tried from, and a very long name by its digest', () => {
    expect(pairKey('alice', '10.0.0.1')).toBe('pair:10.0.0.1|alice');
    expect(pairKey('alice', '::ffff:10.0.0.1')).toBe('pair:10.0.0.1|alice');
    const long = pairKey('x'.repeat(100_000), '10.0.0.1');
    expect(long).toMatch(/^pair:10\.0\.0\.1\|sha256:[0-9a-f]{64}$/);
    expect(pairKey('x'.repeat(100_001), '10.0.0.1')).not.toBe(long);
  });

  it('gives the user-and-address key and the address key, in that order', () => {
    expect(throttleKeys('alice', '10.0.0.1')).toEqual(['pair:10.0.0.1|alice', 'ip:10.0.0.1']);
  });
});
