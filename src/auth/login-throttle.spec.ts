import { addressKey, type LoginAttempt, MemoryLoginThrottle, usernameKey } from './login-throttle.js';

/** Admits the attempt and records it as failed at the same time. */
function failAt(throttle: MemoryLoginThrottle, username: string, ip: string, now: number): void {
  const attempt = throttle.admit(username, ip, now);
  if (typeof attempt === 'string') throw new Error(`not admitted: ${attempt}`);
  throttle.fail(attempt, now);
}

describe(MemoryLoginThrottle.name, () => {
  const t0 = 1_000_000;

  it('blocks a username after 10 failures within 60 s, case-insensitively, until the window passes', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 10; i++) {
      expect(throttle.isBlocked('Jane', `10.0.0.${i}`, t0 + i)).toBe(false);
      failAt(throttle, 'Jane', `10.0.0.${i}`, t0 + i);
    }
    expect(throttle.isBlocked('jane', '10.9.9.9', t0 + 100)).toBe(true);
    expect(throttle.isBlocked('other', '10.9.9.9', t0 + 100)).toBe(false);
    expect(throttle.isBlocked('jane', '10.9.9.9', t0 + 60_000)).toBe(false);
  });

  it('blocks a client address after 10 failures across usernames', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 10; i++) failAt(throttle, `user${i}`, '10.0.0.1', t0);
    expect(throttle.isBlocked('anyone', '10.0.0.1', t0 + 1)).toBe(true);
    expect(throttle.isBlocked(undefined, '10.0.0.1', t0 + 1)).toBe(true);
    expect(throttle.isBlocked('anyone', '10.0.0.2', t0 + 1)).toBe(false);
  });

  it('forgets failures older than the window', () => {
    const throttle = new MemoryLoginThrottle();
    for (let i = 0; i < 9; i++) failAt(throttle, 'jane', '10.0.0.1', t0);
    failAt(throttle, 'jane', '10.0.0.1', t0 + 61_000);
    expect(throttle.isBlocked('jane', '10.0.0.1', t0 + 61_001)).toBe(false);
  });
});

describe(`${MemoryLoginThrottle.name} reservations`, () => {
  const t0 = 2_000_000;

  it('admits no more than 10 attempts in flight; the rest wait (busy), refused only once 10 failed', () => {
    const throttle = new MemoryLoginThrottle();
    const answers = Array.from({ length: 25 }, (_, i) => throttle.admit('jane', `10.0.1.${i}`, t0));
    const admitted = answers.filter((answer): answer is LoginAttempt => typeof answer !== 'string');
    expect(admitted).toHaveLength(10);
    expect(answers.filter((answer) => answer === 'busy')).toHaveLength(15);
    // Attempts in flight are not failures: nothing is blocked yet.
    expect(throttle.isBlocked('jane', '10.0.9.9', t0)).toBe(false);
    for (const attempt of admitted) throttle.fail(attempt, t0);
    expect(throttle.isBlocked('jane', '10.0.9.9', t0)).toBe(true);
    expect(throttle.admit('jane', '10.0.9.9', t0)).toBe('throttled');
  });

  it('frees the place of a released attempt: right logins from one address never throttle it', () => {
    const throttle = new MemoryLoginThrottle();
    for (let round = 0; round < 5; round++) {
      const attempts = Array.from({ length: 10 }, (_, i) => throttle.admit(`user${i}`, '10.0.0.1', t0));
      expect(throttle.admit('someone', '10.0.0.1', t0)).toBe('busy');
      for (const attempt of attempts) throttle.release(attempt as LoginAttempt);
    }
    expect(throttle.isBlocked('someone', '10.0.0.1', t0)).toBe(false);
    expect(typeof throttle.admit('someone', '10.0.0.1', t0)).toBe('object');
  });

  it('wakes a waiting attempt when one ends', async () => {
    const throttle = new MemoryLoginThrottle();
    const attempt = throttle.admit('jane', '10.0.0.1') as LoginAttempt;
    const waited = throttle.settled(60_000);
    throttle.release(attempt);
    await waited;
  });
});

describe('usernameKey', () => {
  it('folds ASCII letters only, so a name outside the username rule never shares a window', () => {
    expect(usernameKey('Jane.DOE')).toBe('jane.doe');
    expect(usernameKey('\u212Aelvin')).toBe('\u212Aelvin');
    expect(usernameKey('ADM\u0130N')).toBe('adm\u0130n');
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
    for (let i = 0; i < 10; i++) failAt(throttle, `user${i}`, `2001:db8:1:2::${i + 1}`, 5_000_000);
    expect(throttle.isBlocked('someone', '2001:db8:1:2:ffff::1', 5_000_001)).toBe(true);
    expect(throttle.isBlocked('someone', '2001:db8:1:3::1', 5_000_001)).toBe(false);
  });
});
