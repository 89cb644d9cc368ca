import { Injectable } from '@nestjs/common';

const WINDOW_MS = 60_000;
const MAX_FAILURES = 10;

/**
 * Counts failed logins per username and per client address. @nestjs/throttler counts every request; the
 * contract counts only failures (401s) and then refuses every attempt for that key until the window passes.
 */
@Injectable()
export class LoginThrottle {
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

  /** Each throttling window already reported, by key: the time of the window's oldest failure. */
  private readonly announced = new Map<string, number>();

  /**
   * The kinds of key (`address`, `username`) blocked now whose window has not been reported yet; each is
   * reported once per window (the audit trail's `auth.login_throttled`).
   */
  newlyBlocked(username: string | undefined, ip: string, now = Date.now()): ('address' | 'username')[] {
    const kinds: ('address' | 'username')[] = [];
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

  /** Forgets every failure (used between e2e tests that share one process). */
  reset(): void {
    this.failures.clear();
    this.announced.clear();
  }

  recordFailure(username: string, ip: string, now = Date.now()): void {
    // Keys are otherwise pruned when next looked at; this bounds memory under a spray of usernames.
    if (this.failures.size > 50_000) for (const key of [...this.failures.keys()]) this.recent(key, now);
    for (const key of this.keys(username, ip)) this.failures.set(key, [...this.recent(key, now), now]);
  }
}
