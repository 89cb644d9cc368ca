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

  isBlocked(username: string | undefined, ip: string, now = Date.now()): boolean {
    return this.keys(username, ip).some((key) => this.recent(key, now).length >= MAX_FAILURES);
  }

  /** Forgets every failure (used between e2e tests that share one process). */
  reset(): void {
    this.failures.clear();
  }

  recordFailure(username: string, ip: string, now = Date.now()): void {
    // Keys are otherwise pruned when next looked at; this bounds memory under a spray of usernames.
    if (this.failures.size > 50_000) for (const key of [...this.failures.keys()]) this.recent(key, now);
    for (const key of this.keys(username, ip)) this.failures.set(key, [...this.recent(key, now), now]);
  }
}
