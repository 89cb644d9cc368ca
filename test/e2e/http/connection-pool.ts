// Part of test/http.e2e-spec.ts: the connection pool.
import pg from 'pg';
import { testDatabaseUrl, type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { poolOf } from '../../support/pool.js';
import { waitFor } from '../../support/wait-for.js';

export function connectionPoolTests({ app, api }: UsedTestApp): void {
  let token: string;

  beforeAll(async () => {
    ({ token } = await freshAdmin(app));
  });

  it('sets the configured statement timeout on its connections', async () => {
    expect(await app.dataSource.query(`SHOW statement_timeout`)).toEqual([{ statement_timeout: '1234ms' }]);
  });

  it('survives its idle connections being terminated by the server and keeps serving', async () => {
    // Open several pooled connections at once, then let them go idle.
    const warm = await Promise.all(Array.from({ length: 8 }, () => api.get('/api/users', { token })));
    expect(warm.map((res) => res.status)).toEqual(Array(8).fill(200));
    // The pool drops a client whose connection failed while idle ('error', then 'remove').
    const pool = poolOf(app.dataSource);
    let removed = 0;
    const onRemove = () => removed++;
    pool.on('remove', onRemove);
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    let count: number;
    try {
      const terminated = await admin.query<{ count: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity
         WHERE application_name = 'module-admin-service' AND datname = current_database()
           AND pid <> pg_backend_pid() AND state = 'idle'`,
      );
      count = terminated.rows[0].count;
      expect(count).toBeGreaterThan(0);
      // The pool's 'error' events for those idle clients must not crash the process.
      await waitFor(() => removed >= count, {
        timeoutMs: 5000,
        what: `the pool to drop the ${count} terminated connections`,
      });
    } finally {
      pool.off('remove', onRemove);
      await admin.end();
    }
    const after = await Promise.all(Array.from({ length: 12 }, () => api.get('/api/users', { token })));
    expect(after.map((res) => res.status)).toEqual(Array(12).fill(200));
    expect((await api.get('/api/health/ready')).status).toBe(200);
  });
}
