// Part of test/events.e2e-spec.ts: retention on a large backlog.
import { ChangeEventsService } from '../../../src/events/change-events.service.js';
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';

/** More than one batch of the prune (10 000 events a statement), and more than one statement can delete in time. */
const BACKLOG = 60_000;

/**
 * docs/events.md, "Cursors, next and retention": the prune runs under the long bound in batches, so a backlog of
 * any size shrinks (one DELETE under the interactive bound was cancelled every day once the backlog outgrew it).
 * The interactive bound is cut short here, so that one statement deleting the whole backlog cannot finish in it.
 */
export function retentionOnLargeBacklog({ app, api }: UsedTestApp): void {
  it('prunes a backlog larger than one batch, keeps the young events, and moves the watermark to the last', async () => {
    const { token } = await freshAdmin(app, { username: 'root' });
    // The backlog, written by a transaction of the test's own past the short bound.
    await app.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = 0`);
      await manager.query(
        `INSERT INTO change_events (type, data, at)
       SELECT 'module.updated', jsonb_build_object('id', n, 'description', repeat('x', 200)), now() - interval '40 days'
       FROM generate_series(1, $1) n`,
        [BACKLOG],
      );
    });
    const [last] = await app.dataSource.query<{ txid: string; id: string }[]>(
      `SELECT e.txid::text AS txid, e.id::text AS id FROM change_events e ORDER BY e.txid DESC, e.id DESC LIMIT 1`,
    );
    const created = await api.post('/api/modules', {
      token,
      body: { code: 'RET101', year: 2026, credits: 5 },
    });
    expect(created.status).toBe(201);

    const started = performance.now();
    const pruned = await app.service.app.get(ChangeEventsService).prune();
    const ms = performance.now() - started;
    console.log(`pruned a backlog of ${BACKLOG} events in ${ms.toFixed(0)} ms`);
    expect(pruned).toBe(BACKLOG);
    const left = await app.dataSource.query<{ type: string }[]>(`SELECT type FROM change_events`);
    expect(left).toEqual([{ type: 'module.created' }]);
    const [watermark] = await app.dataSource.query<{ txid: string; id: string }[]>(
      `SELECT txid::text, id::text FROM change_events_pruned`,
    );
    expect(watermark).toEqual(last);
    // The young event is still served from the start.
    const feed = await api.get('/api/events', { token });
    expect(feed.body.data.events.map((event: { data: { id: number } }) => event.data.id)).toEqual([
      created.body.data.id,
    ]);
  });
}
