import { type DataSource } from 'typeorm';
import pg from 'pg';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import { testDatabaseUrl } from '../support/app.js';
import { useIntegrationModule } from '../support/nest-testing.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The webhook dispatcher's pass over events no enabled webhook takes (`skipUnwantedEvents`), run by several
 * replicas at once: it takes no lock before it moves the position, and moves it only if it is still the one it
 * read, so together they pass over each event once. On a testing module of its own (its own database, no
 * WorkersModule: no dispatcher loop), so that nothing else moves the position meanwhile.
 */
describe('the dispatcher passing over unwanted events, several at once', () => {
  // Four passes at once and the session that holds the position's row (below): within the pool's 10.
  const nest = useIntegrationModule({ providers: [WebhooksRepository] });
  let dataSource: DataSource;
  let webhooks: WebhooksRepository;

  beforeAll(() => {
    dataSource = nest.dataSource;
    webhooks = nest.get(WebhooksRepository);
  });

  const position = async () =>
    (
      await dataSource.query<{ at: string | null; newest: string | null }[]>(
        `SELECT (SELECT last_txid || '.' || last_event_id FROM webhook_dispatch) AS at,
                (SELECT txid || '.' || id FROM change_events ORDER BY txid DESC, id DESC LIMIT 1) AS newest`,
      )
    )[0];

  it('passes over every event exactly once, and moves the position to the last', async () => {
    // A webhook that takes another type only: the pass is the whole round for these events.
    await dataSource.query(
      `INSERT INTO webhooks (url, types, secret) VALUES ('https://receiver.example/hook', '{user.created}', 'whsec_x')`,
    );
    let overlapped = 0;
    let held = 0;
    const watcher = new pg.Client({ connectionString: nest.database.url });
    await watcher.connect();
    for (let round = 0; round < 20; round++) {
      await dataSource.query(
        `INSERT INTO change_events (type, data) SELECT 'module.updated', '{}'::jsonb FROM generate_series(1, 50)`,
      );
      // The position's row held while the four passes start, so that they read the same position and queue on
      // its update: the first to move it wins and the others find it moved. Left to the scheduler, four passes
      // on a busy machine can run one after another and never meet.
      const holder = dataSource.createQueryRunner();
      await holder.startTransaction();
      let settled = false;
      let passes: Awaited<ReturnType<WebhooksRepository['skipUnwantedEvents']>>[];
      try {
        await holder.query(`SELECT 1 FROM webhook_dispatch FOR UPDATE`);
        let ended = 0;
        const running = Promise.all(
          [1, 2, 3, 4].map(() => webhooks.skipUnwantedEvents(1000).finally(() => (ended += 1))),
        ).finally(() => {
          settled = true;
        });
        // Two queued on the row are enough to meet; a pass whose batch is empty (its horizon held, below)
        // moves nothing and never queues, so the wait also ends once every pass has either queued or ended
        // (three ending at once left one queued alone until its statement timeout).
        await waitFor(
          async () => {
            const [{ waiting }] = await watcher
              .query<{ waiting: number }>(
                `SELECT count(*)::int AS waiting FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
              .then((result) => result.rows);
            return waiting >= 2 || waiting + ended >= 4 || settled;
          },
          { what: 'two passes queued on the position' },
        );
        await holder.commitTransaction();
        passes = await running;
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
      if (passes.some((pass) => pass.busy)) overlapped += 1;
      // A transaction of another database that ends between a pass's snapshot and its read of the server's
      // backends cannot be placed, so it holds that pass's horizon (docs/events.md, "What holds the feed
      // back"): the pass says `pending`, and the dispatcher comes back as it does here. The test server's other
      // databases are busy with the other Jest workers' tests, so this happens.
      for (let last = passes; last.some((pass) => pass.pending);) {
        last = [await webhooks.skipUnwantedEvents(1000)];
        passes.push(...last);
        held += 1;
      }
      expect(passes.every((pass) => !pass.wanted)).toBe(true);
      expect(passes.reduce((sum, pass) => sum + pass.skipped, 0)).toBe(50);
      const now = await position();
      expect(now.at).toBe(now.newest);
    }
    await watcher.end();
    // The passes ran into each other at least once (the check above is then about concurrent ones).
    expect(overlapped).toBeGreaterThan(0);
    console.log(
      `dispatcher passes: 20 rounds of 4 at once, ${overlapped} with a pass that found the position moved, ` +
        `${held} further pass(es) after a horizon held by another database's ending transaction`,
    );
  });

  it('moves nothing when an enabled webhook takes one of the events', async () => {
    const before = await position();
    await dataSource.query(
      `INSERT INTO change_events (type, data) VALUES ('module.updated', '{}'), ('user.created', '{}')`,
    );
    const pass = await webhooks.skipUnwantedEvents(1000);
    expect(pass).toMatchObject({ wanted: true, skipped: 0, busy: false });
    expect((await position()).at).toBe(before.at);
  });

  it('is not held back by a transaction open in another database of the server (docs/events.md)', async () => {
    // The suite's own database is another database of the same server: a transaction with an id, left open.
    const other = new pg.Client({ connectionString: testDatabaseUrl() });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      await dataSource.query(`DELETE FROM webhooks`);
      await dataSource.query(
        `INSERT INTO change_events (type, data) SELECT 'module.updated', '{}'::jsonb FROM generate_series(1, 5)`,
      );
      // A pass may still say `pending` when a transaction of another Jest worker's database ends during it (the
      // race of the first test); the dispatcher then comes back. What must not hold it is `other`, open all along:
      // the passes end while it is still open.
      const passes = [await webhooks.skipUnwantedEvents(1000)];
      while (passes.at(-1)!.pending && passes.length < 20)
        passes.push(await webhooks.skipUnwantedEvents(1000));
      expect(passes.at(-1)).toMatchObject({ wanted: false, pending: false });
      // The two events the test before left (a webhook took one) and these five.
      expect(passes.reduce((sum, pass) => sum + pass.skipped, 0)).toBe(7);
      const now = await position();
      expect(now.at).toBe(now.newest);
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
    }
  });
});
