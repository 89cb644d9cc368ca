import { ChangeEventsRepository } from '../src/events/change-events.repository.js';
import { comparePositions, decodeCursor } from '../src/events/feed-cursor.js';
import { startTestApp, type TestApp } from './support/app.js';
import { makeUser, tokenFor } from './support/factories.js';
import { request } from './support/http.js';

interface FeedEvent {
  id: string;
  type: string;
  data: { code?: string };
}

/**
 * The feed's guarantee (docs/events.md): a reader that always passes the last `next` sees every committed event
 * exactly once, even while transactions on two service instances (two pools) commit out of the order they
 * took their ids in. Writers: module creates through both services' HTTP APIs, and transactions on both
 * services' pools that append an event first and commit late (some after a long `pg_sleep`, some rolled back).
 */
describe('Change event feed under concurrent writers', () => {
  let a: TestApp;
  let b: TestApp;
  let token: string;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp();
    await a.reset();
    const admin = await makeUser(a.dataSource, { admin: true, username: 'root' });
    token = tokenFor(admin);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('lets a reader following next see every committed event exactly once, in feed order', async () => {
    const services = [a, b];
    const committed = new Set<string>();
    const rolledBack = new Set<string>();
    let writing = true;

    /** A transaction that takes its id and writes its event first, then commits (or rolls back) after `ms`. */
    const lateTransaction = async (app: TestApp, probe: string, ms: number, commit: boolean) => {
      const repository = app.service.app.get(ChangeEventsRepository);
      try {
        await app.dataSource.transaction(async (manager) => {
          // A `module.deleted` whose code is the probe: typed as the feed's events are, told apart by its code.
          await repository.append(manager, [
            { type: 'module.deleted', data: { id: 1, code: probe, year: 2026 } },
          ]);
          await manager.query(`SELECT pg_sleep($1)`, [ms / 1000]);
          if (!commit) throw new Error('rolled back on purpose');
        });
        committed.add(probe);
      } catch (error) {
        if (commit) throw error;
        rolledBack.add(probe);
      }
    };

    const apiWriter = async (worker: number) => {
      for (let i = 0; i < 25; i++) {
        const app = services[(worker + i) % 2];
        // ^[A-Z]{3}[0-9]{3}$, distinct per worker and step.
        const code = `${'ABCD'[worker]}${'ABCDEFGHIJKLMNOPQRSTUVWXY'[i]}Z${100 + worker * 25 + i}`;
        const res = await request(app.url, 'POST', '/api/modules', {
          token,
          body: { code, year: 2026, credits: 5 },
        });
        expect(res.status).toBe(201);
        committed.add(res.body.data.code);
      }
    };

    const lateWriter = async (worker: number) => {
      for (let i = 0; i < 12; i++) {
        const app = services[(worker + i) % 2];
        // Every fourth holds its id for 1.5 s while everything else commits; every fifth rolls back.
        const ms = i % 4 === 0 ? 1500 : 20 + ((worker * 37 + i * 53) % 200);
        await lateTransaction(app, `late-${worker}-${i}`, ms, i % 5 !== 3);
      }
    };

    const seen: FeedEvent[] = [];
    const reader = async () => {
      let next: string | undefined;
      let turn = 0;
      for (;;) {
        const app = services[turn++ % 2];
        const query = new URLSearchParams({ limit: '7', wait: '1' });
        if (next !== undefined) query.set('after', next);
        const done = !writing;
        const res = await request(app.url, 'GET', `/api/events?${query.toString()}`, { token });
        expect(res.status).toBe(200);
        seen.push(...(res.body.data.events as FeedEvent[]));
        next = res.body.data.next as string;
        // Once every writer has finished, an empty answer means the reader has caught up with all of it.
        if (done && res.body.data.events.length === 0) return;
      }
    };

    const readerDone = reader();
    await Promise.all([
      ...[0, 1, 2, 3].map((worker) => apiWriter(worker)),
      ...[0, 1, 2, 3].map((worker) => lateWriter(worker)),
    ]);
    writing = false;
    await readerDone;

    const labels = seen.map((event) => event.data.code ?? '?');
    const counts = new Map<string, number>();
    for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
    const duplicates = [...counts.values()].filter((count) => count > 1).length;
    const missing = [...committed].filter((label) => !counts.has(label));
    const phantom = labels.filter((label) => !committed.has(label));
    const stored = await a.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM change_events`);
    console.log(
      `feed under concurrency: written ${committed.size} (and ${rolledBack.size} rolled back), ` +
        `seen ${seen.length}, duplicates ${duplicates}, missing ${missing.length}`,
    );
    expect(committed.size).toBe(4 * 25 + 4 * 12 - rolledBack.size);
    expect(rolledBack.size).toBe(8);
    expect(stored[0].n).toBe(committed.size);
    expect(duplicates).toBe(0);
    expect(missing).toEqual([]);
    expect(phantom).toEqual([]);
    expect(seen).toHaveLength(committed.size);
    // Served in strictly increasing feed order (txid, id).
    const positions = seen.map((event) => decodeCursor(event.id)!);
    for (let i = 1; i < positions.length; i++)
      expect(comparePositions(positions[i - 1], positions[i])).toBe(-1);
  });
});
