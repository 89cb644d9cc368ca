const WINDOW_MS = 60_000;
const MAX_FAILURES = 10;

export const LOGIN_THROTTLE_RULES = { windowMs: WINDOW_MS, maxFailures: MAX_FAILURES } as const;

/**
 * Counts failed logins per username and per client address: after 10 failures within 60 s for either,
 * every attempt for it is refused until the window passes. @nestjs/throttler counts every request; the
 * contract counts only failures (401s). In this process ({@link MemoryLoginThrottle}) or, with REDIS_URL,
 * shared by every replica (RedisLoginThrottle in login-throttle-redis.ts).
 */
export abstract class LoginThrottle {
  abstract isBlocked(username: string | undefined, ip: string): boolean | Promise<boolean>;
  abstract recordFailure(username: string, ip: string): void | Promise<void>;
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
    return username === undefined ? [`ip:${ip}`] : [`ip:${ip}`, `user:${username.toLowerCase()}`];
  }

  isBlocked(username: string | undefined, ip: string, now = Date.now()): boolean {
    return this.keys(username, ip).some((key) => this.recent(key, now).length >= MAX_FAILURES);
  }

  reset(): void {
    this.failures.clear();
  }

  recordFailure(username: string, ip: string, now = Date.now()): void {
    // Keys are otherwise pruned when next looked at; this bounds memory under a spray of usernames.
    if (this.failures.size > 50_000) for (const key of [...this.failures.keys()]) this.recent(key, now);
    for (const key of this.keys(username, ip)) this.failures.set(key, [...this.recent(key, now), now]);
  }
}
