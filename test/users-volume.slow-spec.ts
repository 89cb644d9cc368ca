import { useTestApp } from './support/app.js';
import { freshAdmin } from './support/fresh-admin.js';

/**
 * The user routes at their documented limits, where the time goes on volume rather than on a rule: a bulk create
 * of the most users one request may carry (500 argon2id hashes), and an export of 100 000 users streamed. The
 * rules of both routes are tested in users-accounts.e2e-spec.ts and users-bulk.e2e-spec.ts.
 */
describe('users in volume', () => {
  const { app, api } = useTestApp();
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
  });

  const userCount = async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM users`))[0].n);

  it('POST /api/users/bulk accepts 500 users in one request', async () => {
    const users = Array.from({ length: 500 }, (_, i) => ({
      username: `bulk${i}`,
      email: `bulk${i}@Example.edu`,
      password: `password-of-bulk${i}`,
    }));
    const res = await api.post('/api/users/bulk', { token, body: { users } });
    expect(res.status).toBe(201);
    expect(res.body.data).toHaveLength(500);
    expect(res.body.data[499].username).toBe('bulk499');
    expect(await userCount()).toBe(501);
    // 500 argon2id hashes two at a time: about 30 s on two idle cores, far more on a busy shared machine.
  }, 180_000);

  it('GET /api/users/export.csv streams 100000 users without holding them in memory', async () => {
    // In four statements: each stays well within the 5 s statement bound with the search index to maintain.
    for (let from = 1; from <= 100_000; from += 25_000)
      await app.dataSource.query(
        `INSERT INTO users (username, email, password_hash)
         SELECT 'bulk' || n, 'bulk' || n || '@example.edu', 'x' FROM generate_series($1::int, $1::int + 24999) AS n`,
        [from],
      );
    global.gc?.();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const res = await fetch(`${app.url}/api/users/export.csv?sort=email`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let lines = 0;
    let bytes = 0;
    let chunks = 0;
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      bytes += next.value.length;
      for (const byte of next.value) if (byte === 0x0a) lines++;
      // Sampling as the bytes arrive: a buffered answer would show up as one large jump.
      if (++chunks % 16 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    expect(lines).toBe(100_002);
    const growth = (peak - baseline) / 1048576;
    process.stdout.write(
      `100000-row export: ${Math.round(bytes / 1048576)} MiB, heap growth ${growth.toFixed(1)} MiB\n`,
    );
    // The CSV is ~9 MiB; 100000 row objects held at once would take well over 40 MiB of heap.
    expect(growth).toBeLessThan(40);
  }, 120_000);
});
