// The change feed's horizon (docs/events.md) on a testing module: ChangeEventsService.feed, the read behind
// GET /api/events, against transactions held open on a second connection.
import { Transactions } from '../../src/database/transactions.js';
import { type MembersChanged, type NewChangeEvent } from '../../src/events/change-event.shape.js';
import { ChangeFeedRepository } from '../../src/events/change-feed.repository.js';
import { ChangeEventsService } from '../../src/events/change-events.service.js';
import { decodeCursor } from '../../src/events/feed-cursor.js';
import { CHANGE_EVENTS_PROVIDERS, useIntegrationModule } from '../support/nest-testing.js';

interface FeedPage {
  events: { id: string; type: string; data: MembersChanged }[];
  next: string;
}

/** How long a read that should serve waits for it (the service re-reads while events are held back). */
const WAIT_MS = 10_000;

describe("the change feed's horizon", () => {
  const nest = useIntegrationModule({
    providers: CHANGE_EVENTS_PROVIDERS,
  });
  beforeEach(() => nest.reset());

  /** One event, told apart by its module id. */
  const event = (moduleId: number): NewChangeEvent => ({
    type: 'module.members_changed',
    data: { module_id: moduleId, added: [], removed: [], changed: [] },
  });
  /** Writes the event in a transaction of its own, as a feature's write does, and commits. */
  const commit = (moduleId: number) =>
    nest
      .get(Transactions)
      .run((transaction) => nest.get(ChangeEventsService).record(transaction, [event(moduleId)]));
  /** One read of the feed after `after` (a cursor; null: from the start), waiting up to `waitMs` for an event. */
  const read = async (after: string | null, waitMs = 0): Promise<FeedPage> => {
    const answer = await nest.get(ChangeEventsService).feed({
      after: after === null ? null : decodeCursor(after)!,
      afterCursor: after,
      types: null,
      limit: 100,
      waitMs,
    });
    return JSON.parse(answer.parts.join('')) as FeedPage;
  };
  /**
   * Follows the feed from `after` as a client does (each read from the last `next`) until `count` events were
   * served; returns them and the last `next`.
   */
  const follow = async (after: string | null, count: number): Promise<FeedPage> => {
    const served: FeedPage['events'] = [];
    let next = after;
    while (served.length < count) {
      const page = await read(next, WAIT_MS);
      expect(page.events.length).toBeGreaterThan(0);
      served.push(...page.events);
      next = page.next;
    }
    return { events: served, next: next! };
  };
  const modules = (page: FeedPage) => page.events.map((served) => served.data.module_id);
  /** The module ids of every committed event in the table, in the feed's order. */
  const stored = async () =>
    (
      await nest.dataSource.query<{ module_id: number }[]>(
        `SELECT (data->>'module_id')::int AS module_id FROM change_events ORDER BY txid, id`,
      )
    ).map((row) => row.module_id);

  /** Runs `work` with a transaction open on a second connection that has written the event of `moduleId`. */
  async function withOpenWriter(
    moduleId: number,
    work: (writer: { commit(): Promise<void>; rollback(): Promise<void> }) => Promise<void>,
  ): Promise<void> {
    const runner = nest.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await nest.get(ChangeEventsService).record(runner.manager, [event(moduleId)]);
      await work({ commit: () => runner.commitTransaction(), rollback: () => runner.rollbackTransaction() });
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  }

  it('does not pass an event whose transaction is still open, and serves it before the later ones once it commits', async () => {
    await commit(1);
    const start = await follow(null, 1);
    expect(modules(start)).toEqual([1]);

    await withOpenWriter(2, async (writer) => {
      // Committed after event 2 was written: a feed ordered by ids alone would serve it and pass event 2.
      await commit(3);
      expect(await stored()).toEqual([1, 3]);
      // Held behind the open transaction: nothing served, and the cursor stays where it was.
      expect(await read(start.next)).toEqual({ events: [], next: start.next });
      const page = await nest.get(ChangeFeedRepository).readPage(decodeCursor(start.next)!, null, 100);
      expect(page).toMatchObject({ events: [], pending: true });
      await writer.commit();
    });

    // In the feed's order, event 2 (the older transaction) comes before event 3.
    expect(await stored()).toEqual([1, 2, 3]);
    const after = await follow(start.next, 2);
    expect(modules(after)).toEqual([2, 3]);
    // Each served once: nothing more after the last.
    expect(await read(after.next)).toEqual({ events: [], next: after.next });
  });

  it('serves the later events once the open transaction rolls back, without the rolled-back one', async () => {
    await commit(1);
    const start = await follow(null, 1);

    await withOpenWriter(2, async (writer) => {
      await commit(3);
      expect(await read(start.next)).toEqual({ events: [], next: start.next });
      await writer.rollback();
    });

    const after = await follow(start.next, 1);
    expect(modules(after)).toEqual([3]);
    expect(await read(after.next)).toEqual({ events: [], next: after.next });
  });
});
