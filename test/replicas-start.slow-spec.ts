import PgBoss from 'pg-boss';
import { runMigrations } from '../src/database/database.js';
import { scratchDatabase, startTestApp, type TestApp } from './support/app.js';

/**
 * Replicas started together on a newly migrated database: each creates what it must (the first administrator,
 * the delivery job queue) in turn with the others, and all of them start.
 */
describe('replicas starting together on a new database', () => {
  it('all start, and the job queue is created once', async () => {
    const database = await scratchDatabase('mas_replicas');
    // Migrated first, as by the migration job of a deployment, and with the job queue's schema installed (as by
    // an earlier version): the replicas then reach the queue's creation together.
    await runMigrations(database.url);
    const boss = new PgBoss({
      connectionString: database.url,
      schema: 'pgboss',
      schedule: false,
      supervise: false,
    });
    await boss.start();
    await boss.stop({ graceful: false, wait: true });
    const apps: TestApp[] = [];
    try {
      const started = await Promise.allSettled(
        [1, 2, 3].map(() => startTestApp({ databaseUrl: database.url, backgroundWorkers: true })),
      );
      for (const result of started) if (result.status === 'fulfilled') apps.push(result.value);
      expect(
        started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'started')),
      ).toEqual(['started', 'started', 'started']);
      const queues = await apps[0].dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pgboss.queue WHERE name = 'webhook-delivery'`,
      );
      expect(queues[0].n).toBe(1);
      const admins = await apps[0].dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM users`);
      expect(admins[0].n).toBe(1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});
