const DAY_MS = 86_400_000;

/** The moment before which rows are past a retention of `days` days, counted from `now`. */
export const retentionCutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);

/**
 * Runs `prune` at once and then daily, logging what it removed (`what`, e.g. "audit events") and any failure
 * as a warning; the timer is unref'd, so it never keeps the process alive. Returns the function that stops it.
 */
export function pruneDaily(
  prune: () => Promise<number>,
  what: string,
  logger: { log(message: string): void; warn(message: string): void },
): () => void {
  const run = () =>
    prune()
      .then((pruned) => {
        if (pruned > 0) logger.log(`Pruned ${pruned} ${what} past the retention period`);
      })
      .catch((error: unknown) => logger.warn(`Could not prune ${what}: ${String(error)}`));
  void run();
  const timer = setInterval(() => void run(), DAY_MS).unref();
  return () => clearInterval(timer);
}
