// What the parts of test/events.e2e-spec.ts's feed tests share: an administrator made afresh before each test and
// helpers that read the feed.
import { type UsedTestApp } from '../../support/app.js';
import { type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';

export interface FeedEvent {
  id: string;
  type: string;
  at: string;
  data: any;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The area's service with an administrator made afresh before each test (in `given`), and the helpers that read
 * the feed.
 */
export function useChangeFeed({ app, api }: UsedTestApp) {
  const given = {} as { admin: UserRow; token: string };
  beforeEach(async () => {
    ({ admin: given.admin, token: given.token } = await freshAdmin(app, { username: 'root' }));
  });

  const feed = (query = '') => api.get(`/api/events${query}`, { token: given.token });
  /** Every event after `after` (all when absent), following `next`, and the last `next`. */
  const readAll = async (after?: string, types?: string) => {
    const events: FeedEvent[] = [];
    let cursor = after;
    for (;;) {
      const params = new URLSearchParams({ limit: '1000' });
      if (cursor !== undefined) params.set('after', cursor);
      if (types !== undefined) params.set('types', types);
      const res = await feed(`?${params.toString()}`);
      expect(res.status).toBe(200);
      events.push(...res.body.data.events);
      if (res.body.data.events.length === 0) return { events, next: res.body.data.next as string };
      cursor = res.body.data.next;
    }
  };
  const types = (events: FeedEvent[]) => events.map((event) => event.type);
  /** The feed's end now: a cursor after every event written so far. */
  const end = async () => (await readAll()).next;

  return { app, api, given, feed, readAll, types, end };
}

export type ChangeFeedContext = ReturnType<typeof useChangeFeed>;
