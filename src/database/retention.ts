import { type Transaction, type Transactions } from './transactions.js';

const DAY_MS = 86_400_000;

/** Rows one prune statement deletes at most ({@link pruneInBatches}). */
export const PRUNE_BATCH = 10_000;

/** The moment before which rows are past a retention of `days` days, counted from `now`. */
export const retentionCutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);

/**
 * Runs `prune` at once and then daily, logging what it removed (`what`, e.g. "audit events") and any failure
 * as a warning; the timer is unref'd, so it never keeps the process alive. Returns the function that stops it.
 */
export function pruneDaily(
  prune: () => Promise<number>,
  what: string,
  logger: { log(message: string): void; warn(message: string, error: unknown): void },
): () => void {
  const run = () =>
    prune()
      .then((pruned) => {
        if (pruned > 0) logger.log(`Pruned ${pruned} ${what} past the retention period`);
      })
      .catch((error: unknown) => logger.warn(`Could not prune ${what}`, error));
  void run();
  const timer = setInterval(() => void run(), DAY_MS).unref();
  return () => clearInterval(timer);
}

/**
 * Deletes what is past a retention period in batches: `batch` deletes at most `size` rows in the transaction it
 * is given and returns how many it deleted; each batch is a transaction of its own under the long bounds
 * (DB_LONG_STATEMENT_TIMEOUT_MS), and batches run until one deletes fewer than `size`. So a backlog of any size
 * shrinks, no statement holds its locks for long, and a failure keeps what the batches before it deleted.
 * Returns the number of rows deleted.
 */
export async function pruneInBatches(
  transactions: Pick<Transactions, 'runLong'>,
  batch: (transaction: Transaction, size: number) => Promise<number>,
  size = PRUNE_BATCH,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await transactions.runLong((transaction) => batch(transaction, size));
    total += deleted;
    if (deleted < size) return total;
  }
}
