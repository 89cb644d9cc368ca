const SECOND = 1000;
const HOUR = 3600 * SECOND;

/** Waits after the 1st, 2nd… failed attempt; the last one repeats (docs/webhooks.md). */
const RETRY_DELAYS_MS = [5 * SECOND, 30 * SECOND, 120 * SECOND, 600 * SECOND, HOUR, 6 * HOUR];
/** An event is given up this long after its first attempt; a webhook failing this long is disabled. */
const GIVE_UP_AFTER_MS = 72 * HOUR;

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

  /** When to try again after failed attempt `attempt` of an event first tried at `firstAt`; null: give up. */
  nextAttemptAt(attempt: number, firstAt: Date, now: Date): Date | null {
    const next = now.getTime() + this.delayAfter(attempt);
    return next - firstAt.getTime() > this.giveUpAfterMs ? null : new Date(next);
  }
}
