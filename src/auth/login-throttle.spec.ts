import { MemoryLoginThrottle } from './login-throttle.js';

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
