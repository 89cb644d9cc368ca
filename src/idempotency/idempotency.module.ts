import {
  Inject,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { pruneDaily, pruneInBatches } from '../database/retention.js';
import { Transactions } from '../database/transactions.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IDEMPOTENCY_HOURS, IdempotencyRepository } from './idempotency.repository.js';

/** Deletes the keys past their 24 hours, daily like the other retention prunes. */
export class IdempotencyPrune implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private stopPruning?: () => void;

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  prune(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_HOURS * 3_600_000);
    return pruneInBatches(this.transactions, (transaction, size) =>
      this.keys.pruneBefore(cutoff, size, transaction),
    );
  }

  onApplicationBootstrap(): void {
    if (!this.config.backgroundWorkers) return;
    this.stopPruning = pruneDaily(() => this.prune(), 'idempotency keys', this.logger);
  }

  onApplicationShutdown(): void {
    this.stopPruning?.();
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
