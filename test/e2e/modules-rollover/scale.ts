// Part of test/modules-rollover.e2e-spec.ts: rollovers of thousands of modules.
import { type QueryRunner } from 'typeorm';
import { freshAdmin } from '../../support/fresh-admin.js';
import { FROM, type RolloverContext, seedYear, TO } from './context.js';

export function rolloverAtScale(ctx: RolloverContext): void {
  const { app, rollover, given } = ctx;

  describe('at scale', () => {
    /**
     * The statements the service sends during `work`, one list per query runner (a transaction, a repository
     * call); `ROLLOVER_TIMES=1` prints each one's time.
     */
    async function statementsDuring<T>(work: () => Promise<T>): Promise<[T, string[][]]> {
      const dataSource = app.dataSource;
      const original = dataSource.createQueryRunner.bind(dataSource);
      const runners: string[][] = [];
      dataSource.createQueryRunner = (mode?: 'master' | 'slave') => {
        const runner = original(mode);
        const query = runner.query.bind(runner);
        const statements: string[] = [];
        runners.push(statements);
        runner.query = (async (sql: string, ...rest: unknown[]) => {
          const started = performance.now();
          statements.push(sql.replace(/\s+/g, ' ').trim());
          try {
            return await (query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
          } finally {
            if (process.env.ROLLOVER_TIMES)
              console.log(`${(performance.now() - started).toFixed(0)} ms ${sql.slice(0, 60)}`);
          }
        }) as QueryRunner['query'];
        return runner;
      };
      try {
        return [await work(), runners];
      } finally {
        dataSource.createQueryRunner = original;
      }
    }

    /** Long-running work: its transaction runs under the long statement bound (Transactions.runLong). */
    const LONG_BOUND = "SELECT set_config('statement_timeout', $1, true)";

    /**
     * The statements of the rollover's own transaction (the one under the long bound), as their first words.
     * Other runners of the same moment are left out: the guard's user check, and the webhook dispatcher, which
     * commits of earlier tests can wake at any time.
     */
    async function rolloverStatements(body: unknown, dryRun = false) {
      const [res, runners] = await statementsDuring(() => rollover(body, { dryRun }));
      const own = runners.filter((statements) => statements.includes(LONG_BOUND));
      expect(own).toHaveLength(1);
      return { res, statements: own[0].map((sql) => sql.split(/ (FROM|SELECT|WHERE|VALUES|\()/)[0]) };
    }

    const APPLIED = [
      'START TRANSACTION',
      LONG_BOUND,
      'SELECT m.id::text AS id, m.code',
      'SELECT id::text AS id, code',
      'INSERT INTO modules',
      // The members and the change events, made by PostgreSQL in one statement (docs/api.md §13).
      'WITH copied AS',
      // The audit event, written before the commit (writeRows).
      'WITH w0 AS',
      'COMMIT',
    ];
    const DRY_RUN = [
      'START TRANSACTION',
      LONG_BOUND,
      'SELECT m.id::text AS id, m.code',
      'SELECT id::text AS id, code',
      'SELECT p.from_id::text AS "fromId", count(*)::int AS n',
      'COMMIT',
    ];

    it('rolls 5 000 modules with 3 staff each over with the same few statements as 3 modules', async () => {
      await seedYear(app.dataSource, 3, FROM);
      const small = await rolloverStatements({ from_year: FROM, to_year: TO }, true);
      expect(small.statements).toEqual(DRY_RUN);
      const smallApplied = await rolloverStatements({ from_year: FROM, to_year: TO });
      expect(smallApplied.res.body.data).toMatchObject({ created: 3, members_copied: 9 });
      expect(smallApplied.statements).toEqual(APPLIED);

      await app.reset();
      ({ token: given.token } = await freshAdmin(app));
      const rows = await seedYear(app.dataSource, 5000, FROM);
      expect(rows).toBe(20_000);
      let started = performance.now();
      const dry = await rolloverStatements({ from_year: FROM, to_year: TO }, true);
      const dryMs = performance.now() - started;
      expect(dry.statements).toEqual(DRY_RUN);
      expect(dry.res.body.data).toMatchObject({ created: 5000, members_copied: 15_000 });

      started = performance.now();
      const applied = await rolloverStatements({ from_year: FROM, to_year: TO });
      const appliedMs = performance.now() - started;
      expect(applied.res.status).toBe(201);
      expect(applied.res.body.data).toMatchObject({ created: 5000, existing: 0, members_copied: 15_000 });
      expect(applied.res.body.data.modules).toHaveLength(5000);
      expect(applied.statements).toEqual(APPLIED);
      const [{ n }] = await app.dataSource.query(
        `SELECT count(*)::int AS n FROM user_module_roles r JOIN modules m ON m.id = r.module_id WHERE m.year = $1`,
        [TO],
      );
      expect(n).toBe(15_000);

      started = performance.now();
      const again = await rolloverStatements({ from_year: FROM, to_year: TO });
      const againMs = performance.now() - started;
      expect(again.res.body.data).toMatchObject({ created: 0, existing: 5000, members_copied: 0 });
      // Nothing to create and nothing copied: no module insert, no audit event, no change event.
      expect(again.statements).toEqual(
        APPLIED.filter((sql) => sql !== 'INSERT INTO modules' && sql !== 'WITH w0 AS'),
      );
      console.log(
        `rollover of 5000 modules with 3 staff each: dry run ${dryMs.toFixed(0)} ms, applied ` +
          `${appliedMs.toFixed(0)} ms, again ${againMs.toFixed(0)} ms; ${applied.statements.length} statements`,
      );
    });
  });
}
