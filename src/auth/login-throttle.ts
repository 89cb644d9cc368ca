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
 * its password is verified: a wrong password turns the reservation into a failure ({@link LoginThrottle.fail}),
 * a right one frees it ({@link LoginThrottle.release}). While failures and reservations together fill a counter,
 * a further attempt waits for a place ('busy') instead of being refused: a burst of wrong attempts still gets no
 * more than 10 verified, and a burst of right ones (a campus behind one NAT address) all get in, since only
 * failures ever refuse ('throttled').
 */
export type ThrottledKey = 'address' | 'username';

/** What {@link LoginThrottle.admit} answers when it reserves nothing. */
export type NotAdmitted = 'throttled' | 'busy';

/**
 * The username part of a throttle key: ASCII letters folded, nothing else, as the lookup does (a username
 * outside the username rule names nobody). JavaScript's toLowerCase() would fold the Kelvin sign onto `k` and
 * make "\u212Aelvin" share `kelvin`'s window though it cannot sign in as `kelvin`.
 */
export function usernameKey(username: string): string {
  return username.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

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
  /** Resolvers of {@link settled} calls waiting for an attempt of this process to end. */
  private waiters: (() => void)[] = [];

  /** Whether either counter holds 10 failures within the window (attempts in flight do not count). */
  abstract isBlocked(username: string | undefined, ip: string): boolean | Promise<boolean>;
  /**
   * Atomically: when neither counter is full, reserves one place in each and returns the attempt. Otherwise
   * 'throttled' when a counter holds 10 failures (refuse the attempt), or 'busy' when failures and attempts in
   * flight fill it (wait for one to end, {@link settled}, and ask again).
   */
  abstract admit(
    username: string,
    ip: string,
  ): LoginAttempt | NotAdmitted | Promise<LoginAttempt | NotAdmitted>;
  /** The attempt failed (wrong password): its place becomes a failure for the window. */
  abstract fail(attempt: LoginAttempt): void | Promise<void>;
  /** The attempt did not fail (right password, or stopped before the password was checked): frees its place. */
  abstract release(attempt: LoginAttempt): void | Promise<void>;
  /**
   * The kinds of key (`address`, `username`) blocked now whose throttling window has not been reported yet;
   * each window is reported once (the audit trail's `auth.login_throttled`).
   */
  abstract newlyBlocked(username: string | undefined, ip: string): ThrottledKey[] | Promise<ThrottledKey[]>;
  /** Forgets every failure (used between e2e tests that share one process). */
  abstract reset(): void | Promise<void>;

  /** How long a 'busy' attempt waits before asking again when no attempt of this process ends meanwhile. */
  protected abstract readonly pollMs: number;

  /** Resolves when an attempt of this process fails or is released, or after `pollMs` (at most `limitMs`). */
  settled(limitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, Math.min(limitMs, this.pollMs)));
      const waiters = this.waiters;
      function done() {
        clearTimeout(timer);
        const index = waiters.indexOf(done);
        if (index >= 0) waiters.splice(index, 1);
        resolve();
      }
      waiters.push(done);
    });
  }

  /** Wakes every {@link settled} waiter: an attempt ended, a place may be free. */
  protected wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}

/** The counters of one process (no REDIS_URL): each replica counts only the failures it saw. */
export class MemoryLoginThrottle extends LoginThrottle {
  protected readonly pollMs = 1000;
  /** Failure times by key. */
  private readonly failures = new Map<string, number[]>();
  /** Attempts in flight by key: their id and admission time. */
  private readonly pending = new Map<string, Map<string, number>>();
  private sequence = 0;

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((time) => now - time < WINDOW_MS);
    if (times.length === 0) this.failures.delete(key);
    else this.failures.set(key, times);
    return times;
  }

  /** Attempts in flight for the key; one older than the window (its request never ended) no longer counts. */
  private inFlight(key: string, now: number): number {
    const attempts = this.pending.get(key);
    if (!attempts) return 0;
    for (const [id, at] of attempts) if (now - at >= WINDOW_MS) attempts.delete(id);
    if (attempts.size === 0) this.pending.delete(key);
    return attempts.size;
  }

  private keys(username: string | undefined, ip: string): string[] {
    const address = `ip:${addressKey(ip)}`;
    return username === undefined ? [address] : [address, `user:${usernameKey(username)}`];
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
    this.pending.clear();
    this.announced.clear();
  }

  /** Synchronous, so no other attempt can run between the check and the reservation. */
  admit(username: string, ip: string, now = Date.now()): LoginAttempt | NotAdmitted {
    // Keys are otherwise pruned when next looked at; this bounds memory under a spray of usernames.
    if (this.failures.size > 50_000) for (const key of [...this.failures.keys()]) this.recent(key, now);
    const keys = this.keys(username, ip);
    const failed = keys.map((key) => this.recent(key, now).length);
    if (failed.some((count) => count >= MAX_FAILURES)) return 'throttled';
    if (keys.some((key, i) => failed[i] + this.inFlight(key, now) >= MAX_FAILURES)) return 'busy';
    const id = String(++this.sequence);
    for (const key of keys) {
      let attempts = this.pending.get(key);
      if (!attempts) this.pending.set(key, (attempts = new Map<string, number>()));
      attempts.set(id, now);
    }
    return { keys, at: now, id };
  }

  fail(attempt: LoginAttempt, now = Date.now()): void {
    for (const key of attempt.keys) {
      if (this.pending.get(key)?.delete(attempt.id)) this.failures.set(key, [...this.recent(key, now), now]);
      if (this.pending.get(key)?.size === 0) this.pending.delete(key);
    }
    this.wake();
  }

  release(attempt: LoginAttempt): void {
    for (const key of attempt.keys) {
      this.pending.get(key)?.delete(attempt.id);
      if (this.pending.get(key)?.size === 0) this.pending.delete(key);
    }
    this.wake();
  }
}
