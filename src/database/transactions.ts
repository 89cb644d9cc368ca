import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * A database transaction in progress, as services see it: something to hand to repository methods so their
 * statements join it. Services never call it themselves.
 */
export type Transaction = EntityManager;

/**
 * Opens transactions for services whose transaction boundary interleaves with rules: `run(work)` commits when
 * `work` resolves and rolls back when it throws. Services pass the transaction on to repositories.
 */
@Injectable()
export class Transactions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
