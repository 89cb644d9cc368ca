import { DataSource } from 'typeorm';
import { type Transaction } from '../database/transactions.js';
import { type ChangeEventType } from '../events/change-event-types.js';
import {
  ChangeFeedRepository,
  type FeedPosition,
  type StoredChangeEvent,
} from '../events/change-feed.repository.js';
import { decodeCursor } from '../events/feed-cursor.js';
import { DEFAULT_CONFIG, FakeTransactions, NO_DATABASE } from '../testing/fakes.js';
import { type DeliveryJob, DeliveryQueue } from './delivery-queue.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { type DispatchSkip, WebhooksRepository } from './webhooks.repository.js';

// The unit tier's one fake style: src/testing/fakes.ts. The feed, the webhooks and the dispatch position live in
// memory; test/integration/webhook-dispatch-pass.int-spec.ts runs the same pass on PostgreSQL.

const BATCH = 500;
const T0 = Date.parse('2026-11-21T08:00:00.000Z');

const after = (event: FeedPosition, position: FeedPosition | null) =>
  position === null ||
  BigInt(event.txid) > BigInt(position.txid) ||
  (event.txid === position.txid && BigInt(event.id) > BigInt(position.id));

/** The change feed: events in feed order; `pending` says an older transaction still hides some. */
class FakeFeed extends ChangeFeedRepository {
  readonly events: StoredChangeEvent[] = [];
  pending = false;

  constructor() {
    super(NO_DATABASE);
  }

  commit(type: ChangeEventType, data: unknown): StoredChangeEvent {
    const n = this.events.length + 1;
    const event = { id: String(n), txid: String(1000 + n), type, at: new Date(T0 + n * 1000), data };
    this.events.push(event);
    return event;
  }

  next(position: FeedPosition | null, limit: number): StoredChangeEvent[] {
    return this.events.filter((event) => after(event, position)).slice(0, limit);
  }

  override readPage(position: FeedPosition | null, types: readonly string[] | null, limit: number) {
    expect(types).toBeNull();
    return Promise.resolve({ events: this.next(position, limit), pruned: null, pending: this.pending });
  }
}

/** The webhooks and the dispatch position; `heldElsewhere` is another replica holding the position's row. */
class FakeWebhooks extends WebhooksRepository {
  readonly hooks: { id: number; types: string[]; enabled: boolean }[] = [];
  position: FeedPosition | null = null;
  heldElsewhere = false;
  /** Another replica takes the position between the skip statement and the lock. */
  takenBeforeLock = false;
  readonly saved: { position: FeedPosition; transaction: Transaction }[] = [];

  constructor(private readonly feed: FakeFeed) {
    super(NO_DATABASE);
  }

  private wants(type: string): boolean {
    return this.hooks.some((hook) => hook.enabled && (hook.types.includes('*') || hook.types.includes(type)));
  }

  override skipUnwantedEvents(limit: number): Promise<DispatchSkip> {
    if (this.heldElsewhere)
      return Promise.resolve({ busy: true, skipped: 0, wanted: false, lastAt: null, pending: false });
    const next = this.feed.next(this.position, limit);
    const last = next.at(-1);
    const base = { busy: false, lastAt: last?.at ?? null, pending: this.feed.pending };
    if (next.some((event) => this.wants(event.type)))
      return Promise.resolve({ ...base, skipped: 0, wanted: true });
    if (last) this.position = { txid: last.txid, id: last.id };
    return Promise.resolve({ ...base, skipped: next.length, wanted: false });
  }

  override lockDispatchPosition(): Promise<FeedPosition | null | undefined> {
    return Promise.resolve(this.heldElsewhere || this.takenBeforeLock ? undefined : this.position);
  }

  override enabledSubscriptions(): Promise<{ id: number; types: string[] }[]> {
    return Promise.resolve(this.hooks.filter((hook) => hook.enabled).map(({ id, types }) => ({ id, types })));
  }

  override saveDispatchPosition(position: FeedPosition, transaction: Transaction): Promise<void> {
    this.saved.push({ position, transaction });
    this.position = position;
    return Promise.resolve();
  }
}

class FakeQueue extends DeliveryQueue {
  readonly enqueued: { jobs: readonly DeliveryJob[]; startAfter: Date | null; transaction: Transaction }[] =
    [];

  constructor() {
    super(DEFAULT_CONFIG, new DataSource({ type: 'postgres', url: 'postgres://unused@127.0.0.1:1/unused' }));
  }

  override enqueue(
    jobs: readonly DeliveryJob[],
    startAfter: Date | null,
    transaction: Transaction,
  ): Promise<void> {
    this.enqueued.push({ jobs, startAfter, transaction });
    return Promise.resolve();
  }
}

function setUp(hooks: { id: number; types: string[]; enabled?: boolean }[]) {
  const feed = new FakeFeed();
  const webhooks = new FakeWebhooks(feed);
  webhooks.hooks.push(...hooks.map((hook) => ({ enabled: true, ...hook })));
  const queue = new FakeQueue();
  const transactions = new FakeTransactions();
  const dispatcher = new WebhookDispatcher(feed, webhooks, queue, transactions);
  return { feed, webhooks, queue, transactions, dispatcher };
}

describe(WebhookDispatcher.name, () => {
  it('enqueues one job per enabled webhook taking each event, in the transaction that moves the position', async () => {
    const { feed, webhooks, queue, transactions, dispatcher } = setUp([
      { id: 1, types: ['module.created'] },
      { id: 2, types: ['*'] },
      { id: 3, types: ['module.created', 'user.created'], enabled: false },
      { id: 4, types: ['user.deleted'] },
    ]);
    const created = feed.commit('module.created', { id: 7, code: 'CSC100' });
    feed.commit('user.created', { id: 9 });
    const last = feed.commit('module.updated', { id: 7 });

    const before = Date.now();
    const result = await dispatcher.dispatchOnce();
    expect(result).toEqual({ dispatched: 3, jobs: 4, busy: false, pending: false });
    expect(transactions.opened).toBe(1);
    expect(queue.enqueued).toHaveLength(1);
    const [{ jobs, startAfter, transaction }] = queue.enqueued;
    expect([startAfter, transaction]).toEqual([null, transactions.marker]);
    // Feed order first, then webhook order.
    expect(jobs.map((job) => [job.event.type, job.webhookId])).toEqual([
      ['module.created', '1'],
      ['module.created', '2'],
      ['user.created', '2'],
      ['module.updated', '2'],
    ]);
    expect(jobs[0]).toMatchObject({
      attempt: 1,
      event: { type: 'module.created', at: created.at.toISOString(), data: { id: 7, code: 'CSC100' } },
    });
    // The event id is the feed's cursor, so a receiver reading the feed too can match the two.
    expect(decodeCursor(jobs[0].event.id)).toEqual({ txid: created.txid, id: created.id });
    expect(Date.parse(jobs[0].firstAt)).toBeGreaterThanOrEqual(before);
    expect(new Set(jobs.map((job) => job.firstAt)).size).toBe(1);
    expect(webhooks.saved).toEqual([
      { position: { txid: last.txid, id: last.id }, transaction: transactions.marker },
    ]);
    expect(dispatcher.backlogSince).toBeNull();

    // The next round finds nothing new and enqueues nothing.
    await expect(dispatcher.dispatchOnce()).resolves.toEqual({
      dispatched: 0,
      jobs: 0,
      busy: false,
      pending: false,
    });
    expect(queue.enqueued).toHaveLength(1);
  });

  it('passes over events no enabled webhook takes without a transaction, moving the position past them', async () => {
    const { feed, webhooks, queue, transactions, dispatcher } = setUp([
      { id: 1, types: ['user.deleted'] },
      { id: 2, types: ['*'], enabled: false },
    ]);
    feed.commit('module.created', {});
    const last = feed.commit('module.deleted', {});
    await expect(dispatcher.dispatchOnce()).resolves.toEqual({
      dispatched: 2,
      jobs: 0,
      busy: false,
      pending: false,
    });
    expect([transactions.opened, queue.enqueued, webhooks.saved]).toEqual([0, [], []]);
    expect(webhooks.position).toEqual({ txid: last.txid, id: last.id });
  });

  it('dispatches in batches of 500, reporting the backlog while a batch comes back full', async () => {
    const { feed, queue, dispatcher } = setUp([{ id: 1, types: ['*'] }]);
    for (let i = 0; i < 2 * BATCH + 200; i++) feed.commit('user.updated', { id: i });
    const rounds = [];
    for (let round = 0; round < 3; round++) {
      rounds.push({ ...(await dispatcher.dispatchOnce()), backlog: dispatcher.backlogSince });
    }
    expect(rounds.map(({ dispatched, jobs, backlog }) => [dispatched, jobs, backlog])).toEqual([
      [BATCH, BATCH, feed.events[BATCH - 1].at],
      [BATCH, BATCH, feed.events[2 * BATCH - 1].at],
      [200, 200, null],
    ]);
    const ids = queue.enqueued.flatMap(({ jobs }) =>
      jobs.map((job) => (job.event.data as { id: number }).id),
    );
    expect(ids).toEqual(feed.events.map((_, i) => i));
  });

  it('reports the backlog of a full batch passed over too', async () => {
    const { feed, dispatcher } = setUp([]);
    for (let i = 0; i < BATCH + 1; i++) feed.commit('module.updated', {});
    await expect(dispatcher.dispatchOnce()).resolves.toMatchObject({ dispatched: BATCH, jobs: 0 });
    expect(dispatcher.backlogSince).toEqual(feed.events[BATCH - 1].at);
    await dispatcher.dispatchOnce();
    expect(dispatcher.backlogSince).toBeNull();
  });

  it('leaves the round to the replica holding the position, enqueueing nothing and keeping the backlog', async () => {
    const { feed, webhooks, queue, transactions, dispatcher } = setUp([{ id: 1, types: ['*'] }]);
    feed.commit('module.created', {});
    webhooks.heldElsewhere = true;
    await expect(dispatcher.dispatchOnce()).resolves.toEqual({
      dispatched: 0,
      jobs: 0,
      busy: true,
      pending: false,
    });
    expect([transactions.opened, queue.enqueued, webhooks.position]).toEqual([0, [], null]);

    // Taken between the skip statement and the lock: busy too, from inside the transaction.
    webhooks.heldElsewhere = false;
    webhooks.takenBeforeLock = true;
    await expect(dispatcher.dispatchOnce()).resolves.toEqual({
      dispatched: 0,
      jobs: 0,
      busy: true,
      pending: false,
    });
    expect([transactions.opened, queue.enqueued, webhooks.saved]).toEqual([1, [], []]);
  });

  it('says when events wait behind an older transaction, so the loop looks again soon', async () => {
    const { feed, dispatcher } = setUp([{ id: 1, types: ['*'] }]);
    feed.pending = true;
    await expect(dispatcher.dispatchOnce()).resolves.toEqual({
      dispatched: 0,
      jobs: 0,
      busy: false,
      pending: true,
    });
    feed.commit('module.created', {});
    await expect(dispatcher.dispatchOnce()).resolves.toEqual({
      dispatched: 1,
      jobs: 1,
      busy: false,
      pending: true,
    });
  });
});
