import { type Transaction, type Transactions } from './transactions.js';

const DAY_MS = 86_400_000;

/** Rows one prune statement deletes at most ({@link pruneInBatches}). */
export const PRUNE_BATCH = 10_000;

/** The moment before which rows are past a retention of `days` days, counted from `now`. */
export const retentionCutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);

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
