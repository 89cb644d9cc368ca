const WINDOW_MS = 60_000;
const MAX_FAILURES = 10;

export const LOGIN_THROTTLE_RULES = { windowMs: WINDOW_MS, maxFailures: MAX_FAILURES } as const;

/**
 * Counts failed logins per username and per client address: after 10 failures within 60 s for either,
 * every attempt for it is refused until the window passes. @nestjs/throttler counts every request; the
 * contract counts only failures (401s). In this process ({@link MemoryLoginThrottle}) or, with REDIS_URL,
 * shared by every replica (RedisLoginThrottle in login-throttle-redis.ts).
 *
 * An attempt is admitted by reserving a place in both counters at once ({@link LoginThrottle.admit}), before
 * its password is verified: the reservation is the failure if the password is wrong, and is released if it is
 * right. Checking first and counting after the (slow) verification would admit every attempt of a burst that
 * arrives before the first failure is counted.
 */
export type ThrottledKey = 'address' | 'username';

/**
 * The client-address part of a throttle key. An IPv6 client is counted by its /64: one subscriber gets a whole
 * /64 (often more) and can pick any of its 2^64 addresses, so counting each /128 on its own would throttle
 * nobody. An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function addressKey(ip: string): string {
  const address = ip.split('%')[0].toLowerCase();
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return mapped[1];
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail fills the last two groups; only the first four groups matter here.
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => (parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/** A reserved attempt: the counters it holds a place in, and that place. */
export interface LoginAttempt {
  readonly keys: readonly string[];
  readonly at: number;
  readonly id: string;
}

export abstract class LoginThrottle {
  /** Whether either counter is full (failures and attempts in flight within the window). */
  abstract isBlocked(username: string | undefined, ip: string): boolean | Promise<boolean>;
  /**
   * Atomically: when neither counter is full, reserves one place in each and returns the attempt; otherwise
   * undefined (refuse the attempt). A reservation not released counts as a failure for the whole window.
   */
  abstract admit(username: string, ip: string): LoginAttempt | undefined | Promise<LoginAttempt | undefined>;
  /** The attempt did not fail (right password, or stopped before the password was checked): frees its place. */
  abstract release(attempt: LoginAttempt): void | Promise<void>;
  /**
   * The kinds of key (`address`, `username`) blocked now whose throttling window has not been reported yet;
   * each window is reported once (the audit trail's `auth.login_throttled`).
   */
  abstract newlyBlocked(username: string | undefined, ip: string): ThrottledKey[] | Promise<ThrottledKey[]>;
  /** Forgets every failure (used between e2e tests that share one process). */
  abstract reset(): void | Promise<void>;
}

/** The counters of one process (no REDIS_URL): each replica counts only the failures it saw. */
export class MemoryLoginThrottle extends LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((time) => now - time < WINDOW_MS);
    if (times.length === 0) this.failures.delete(key);
    else this.failures.set(key, times);
    return times;
  }

  private keys(username: string | undefined, ip: string): string[] {
    const address = `ip:${addressKey(ip)}`;
    return username === undefined ? [address] : [address, `user:${username.toLowerCase()}`];
  }

  /** Each throttling window already reported, by key: the time of the window's oldest failure. */
  private readonly announced = new Map<string, number>();

  newlyBlocked(username: string | undefined, ip: string, now = Date.now()): ThrottledKey[] {
    const kinds: ThrottledKey[] = [];
    for (const key of this.keys(username, ip)) {
      const times = this.recent(key, now);
      if (times.length < MAX_FAILURES || this.announced.get(key) === times[0]) continue;
      this.announced.set(key, times[0]);
      kinds.push(key.startsWith('ip:') ? 'address' : 'username');
    }
    for (const [key, since] of this.announced) if (now - since >= WINDOW_MS) this.announced.delete(key);
    return kinds;
  }

  isBlocked(username: string | undefined, ip: string, now = Date.now()): boolean {
    return this.keys(username, ip).some((key) => this.recent(key, now).length >= MAX_FAILURES);
  }

  reset(): void {
    this.failures.clear();
    this.announced.clear();
  }

  /** Synchronous, so no other attempt can run between the check and the reservation. */
  admit(username: string, ip: string, now = Date.now()): LoginAttempt | undefined {
    // Keys are otherwise pruned when next looked at; this bounds memory under a spray of usernames.
    if (this.failures.size > 50_000) for (const key of [...this.failures.keys()]) this.recent(key, now);
    const keys = this.keys(username, ip);
    if (keys.some((key) => this.recent(key, now).length >= MAX_FAILURES)) return undefined;
    for (const key of keys) this.failures.set(key, [...this.recent(key, now), now]);
    return { keys, at: now, id: '' };
  }

  release(attempt: LoginAttempt): void {
    for (const key of attempt.keys) {
      const times = this.failures.get(key);
      const index = times?.indexOf(attempt.at) ?? -1;
      if (index < 0) continue;
      times!.splice(index, 1);
      if (times!.length === 0) this.failures.delete(key);
    }
  }
}
