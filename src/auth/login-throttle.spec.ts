import { addressKey, MemoryLoginThrottle } from './login-throttle.js';

describe(MemoryLoginThrottle.name, () => {
  const t0 = 1_000_000;

  it('blocks a username after 10 failures within 60 s, case-insensitively, until the window passes', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 10; i++) {
      expect(throttle.isBlocked('Jane', `10.0.0.${i}`, t0 + i)).toBe(false);
      throttle.admit('Jane', `10.0.0.${i}`, t0 + i);
    }
    expect(throttle.isBlocked('jane', '10.9.9.9', t0 + 100)).toBe(true);
    expect(throttle.isBlocked('other', '10.9.9.9', t0 + 100)).toBe(false);
    expect(throttle.isBlocked('jane', '10.9.9.9', t0 + 60_000)).toBe(false);
  });

  it('blocks a client address after 10 failures across usernames', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 10; i++) throttle.admit(`user${i}`, '10.0.0.1', t0);
    expect(throttle.isBlocked('anyone', '10.0.0.1', t0 + 1)).toBe(true);
    expect(throttle.isBlocked(undefined, '10.0.0.1', t0 + 1)).toBe(true);
    expect(throttle.isBlocked('anyone', '10.0.0.2', t0 + 1)).toBe(false);
  });

  it('forgets failures older than the window', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 9; i++) throttle.admit('jane', '10.0.0.1', t0);
    throttle.admit('jane', '10.0.0.1', t0 + 61_000);
    expect(throttle.isBlocked('jane', '10.0.0.1', t0 + 61_001)).toBe(false);
  });
});

describe(`${MemoryLoginThrottle.name} reservations`, () => {
  const t0 = 2_000_000;

  it('admits no more than 10 attempts in flight, before any of them has failed', () => {
    const throttle = new MemoryLoginThrottle();
    const admitted = Array.from({ length: 25 }, (_, i) => throttle.admit('jane', `10.0.1.${i}`, t0));
    expect(admitted.filter(Boolean)).toHaveLength(10);
    expect(throttle.isBlocked('jane', '10.0.9.9', t0)).toBe(true);
  });

  it('frees the place of a released attempt', () => {
    const throttle = new MemoryLoginThrottle();
    const attempts = Array.from({ length: 10 }, () => throttle.admit('jane', '10.0.0.1', t0)!);
    expect(throttle.admit('jane', '10.0.0.1', t0)).toBeUndefined();
    throttle.release(attempts[3]);
    expect(throttle.isBlocked('jane', '10.0.0.1', t0)).toBe(false);
    expect(throttle.admit('jane', '10.0.0.1', t0)).toBeDefined();
    expect(throttle.admit('jane', '10.0.0.1', t0)).toBeUndefined();
  });
});

describe('addressKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['2001:0db8:0001:0002:ffff:0:0:1', '2001:db8:1:2::/64'],
  ])('%s counts as %s', (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });

  it('throttles a whole IPv6 /64 as one client', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 10; i++) throttle.admit(`user${i}`, `2001:db8:1:2::${i + 1}`, 5_000_000);
    expect(throttle.isBlocked('someone', '2001:db8:1:2:ffff::1', 5_000_001)).toBe(true);
    expect(throttle.isBlocked('someone', '2001:db8:1:3::1', 5_000_001)).toBe(false);
  });
});
