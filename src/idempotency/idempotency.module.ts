import { Injectable, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { pruneInBatches } from '../database/retention.js';
import { Transactions } from '../database/transactions.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IDEMPOTENCY_HOURS, IdempotencyRepository } from './idempotency.repository.js';

/** Deletes the keys past their 24 hours; run daily like the other retention prunes (src/workers/). */
@Injectable()
export class IdempotencyPrune {
  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly transactions: Transactions,
  ) {}

  prune(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_HOURS * 3_600_000);
    return pruneInBatches(this.transactions, (transaction, size) =>
      this.keys.pruneBefore(cutoff, size, transaction),
    );
  }
}

/**
 * Idempotent retries of POSTs (docs/api.md §17). Imported before CoreModule, so its interceptor runs around the
 * envelope's and remembers the answer as sent.
 */
@Module({
  providers: [
    IdempotencyRepository,
    IdempotencyPrune,
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
  ],
  exports: [IdempotencyPrune],
})
export class IdempotencyModule {}
