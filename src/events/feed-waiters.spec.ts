import { type FeedPosition, type SharedFeedPage } from './change-feed.repository.js';
import { FeedWaiters, type FeedWaitersSource, type HeldRequest, type WaitOutcome } from './feed-waiters.js';

const event = (id: number, type = 'module.created') => ({
  txid: '100',
  id: String(id),
  type: type as 'module.created',
  json: `{"id":${id}}`,
});
const at = (id: number): FeedPosition => ({ txid: '100', id: String(id) });

/** A feed of fixed events; every read is recorded, and the page can be changed between reads. */
class FakeFeed implements FeedWaitersSource {
  connected = true;
  reads: { after: FeedPosition | null; types: readonly string[] | null; limit: number }[] = [];
  page: SharedFeedPage = { events: [], truncated: false, pruned: null, pendingTypes: [] };
  failure: Error | undefined;

  read(after: FeedPosition | null, types: readonly string[] | null, limit: number): Promise<SharedFeedPage> {
    this.reads.push({ after, types, limit });
    if (this.failure) return Promise.reject(this.failure);
    const events = this.page.events.filter(
      (e) =>
        (after === null || BigInt(e.id) > BigInt(after.id)) && (types === null || types.includes(e.type)),
    );
    return Promise.resolve({
      ...this.page,
      events: events.slice(0, limit),
      truncated: events.length >= limit,
    });
  }
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('FeedWaiters', () => {
  let feed: FakeFeed;
  let waiters: FeedWaiters;
  let counted: number;
  const hold = (request: Partial<HeldRequest>): Promise<WaitOutcome> =>
    waiters.wait({
      after: at(1),
      types: null,
      limit: 100,
      deadline: Date.now() + 10_000,
      seen: waiters.wakeUps,
      pending: false,
      ...request,
    });

  beforeEach(() => {
    feed = new FakeFeed();
    counted = 0;
    waiters = new FeedWaiters(feed, () => (counted += 1));
  });
  afterEach(() => waiters.drain());

  it('answers every held request from one read, each by its own after, types and limit', async () => {
    const all = hold({});
    const later = hold({ after: at(3) });
    const limited = hold({ limit: 1 });
    const users = hold({ types: ['user.created'] });
    feed.page.events = [event(2), event(3), event(4), event(5, 'user.created')];
    waiters.wake();
    const ids = (outcome: WaitOutcome) =>
      outcome.kind === 'events' ? outcome.events.map((e) => e.id) : outcome;
    expect(ids(await all)).toEqual(['2', '3', '4', '5']);
    expect(ids(await later)).toEqual(['4', '5']);
    expect(ids(await limited)).toEqual(['2']);
    expect(ids(await users)).toEqual(['5']);
    expect(feed.reads).toEqual([{ after: at(1), types: null, limit: 100 }]);
    expect(counted).toBe(1);
  });

  it('keeps a request with nothing of its types waiting, and answers it with nothing at its deadline', async () => {
    const other = hold({ types: ['user.deleted'], deadline: Date.now() + 50 });
    feed.page.events = [event(2)];
    waiters.wake();
    await settled();
    expect(feed.reads).toHaveLength(1);
    expect(await other).toEqual({ kind: 'none' });
  });

  it('sends a request back to read on its own when the shared read stopped at its limit before its events', async () => {
    const small = hold({ limit: 2 });
    const typed = hold({ limit: 2, types: ['user.created'] });
    feed.page.events = [event(2), event(3), event(4, 'user.created')];
    waiters.wake();
    expect(await small).toMatchObject({ kind: 'events' });
    expect(await typed).toEqual({ kind: 'reread' });
  });

  it('answers 410 to a request whose cursor retention passed', async () => {
    const old = hold({ after: at(1) });
    feed.page.pruned = at(5);
    waiters.wake();
    expect(await old).toEqual({ kind: 'expired' });
  });

  it('hands a failed read to every request it was for', async () => {
    const a = hold({});
    const b = hold({ types: ['user.created'] });
    feed.failure = new Error('connection lost');
    waiters.wake();
    expect(await a).toEqual({ kind: 'failed', error: feed.failure });
    expect(await b).toEqual({ kind: 'failed', error: feed.failure });
  });

  it('reads at once for a request woken between its own read and its wait', async () => {
    const seen = waiters.wakeUps;
    waiters.wake();
    feed.page.events = [event(2)];
    expect(await hold({ seen })).toMatchObject({ kind: 'events' });
  });

  it('reads again on a backoff, once for everyone, while events of their types wait behind the horizon', async () => {
    feed.page.pendingTypes = ['module.created'];
    const a = hold({ pending: true });
    const b = hold({ pending: true });
    await new Promise((resolve) => setTimeout(resolve, 40));
    const reads = feed.reads.length;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(3);
    feed.page = { ...feed.page, pendingTypes: [], events: [event(2)] };
    expect(await a).toMatchObject({ kind: 'events' });
    expect(await b).toMatchObject({ kind: 'events' });
  });

  it('answers every held request with what one last read finds when the service stops', async () => {
    const a = hold({});
    const b = hold({ types: ['user.created'] });
    feed.page.events = [event(2)];
    waiters.drain();
    expect(await a).toMatchObject({ kind: 'events' });
    expect(await b).toEqual({ kind: 'none' });
    expect(feed.reads).toHaveLength(1);
  });
});
