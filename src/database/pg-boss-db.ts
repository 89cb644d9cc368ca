import { type EntityManager } from 'typeorm';

/** What pg-boss calls to run its statements (its `db` option). */
interface JobDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * pg-boss's statements on a TypeORM transaction: a job sent or completed through it commits or rolls back with
 * the transaction's other writes (pg-boss's `send`/`insert`/`complete` take it as their `db` option).
 */
export function jobDbOf(transaction: EntityManager): JobDb {
  const runner = transaction.queryRunner;
  if (!runner) throw new Error('jobDbOf needs a transaction');
  return {
    async executeSql(text, values) {
      const result = await runner.query(text, values, true);
      return { rows: result.records ?? [] };
    },
  };
}
