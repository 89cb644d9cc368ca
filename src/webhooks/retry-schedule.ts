const SECOND = 1000;
const HOUR = 3600 * SECOND;

/** Waits after the 1st, 2nd… failed attempt; the last one repeats (docs/webhooks.md). */
const RETRY_DELAYS_MS = [5 * SECOND, 30 * SECOND, 120 * SECOND, 600 * SECOND, HOUR, 6 * HOUR];
/** An event is given up this long after its first attempt; a webhook failing this long is disabled. */
const GIVE_UP_AFTER_MS = 72 * HOUR;

/** A webhook failing without a delivered attempt this long is paused (docs/webhooks.md, "Circuit breaker"). */
const PAUSE_AFTER_MS = 24 * HOUR;
/** While paused, its attempts are made at most once per this span (a probe round), the others wait for it. */
const PROBE_EVERY_MS = 15 * 60 * SECOND;

/** The retry timing, every span multiplied by `scale` (WEBHOOK_RETRY_SCALE: 1 in production). */
export class RetrySchedule {
  constructor(private readonly scale: number) {}

  /** How long to wait after failed attempt `attempt` (1-based). */
  delayAfter(attempt: number): number {
    return RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] * this.scale;
  }

  /** The window after which an event is given up and a failing webhook disabled. */
  get giveUpAfterMs(): number {
    return GIVE_UP_AFTER_MS * this.scale;
  }

  /** Whether a webhook failing since `failingSince` is paused now. */
  paused(failingSince: Date | null, now: Date): boolean {
    return failingSince !== null && now.getTime() - failingSince.getTime() >= PAUSE_AFTER_MS * this.scale;
  }

  /** While paused, when the next probe round may start after an attempt made at `lastAttemptAt`. */
  nextProbeAt(lastAttemptAt: Date): Date {
    return new Date(lastAttemptAt.getTime() + PROBE_EVERY_MS * this.scale);
  }

  /** When to try again after failed attempt `attempt` of an event first tried at `firstAt`; null: give up. */
  nextAttemptAt(attempt: number, firstAt: Date, now: Date): Date | null {
    const next = now.getTime() + this.delayAfter(attempt);
    return next - firstAt.getTime() > this.giveUpAfterMs ? null : new Date(next);
  }
}
