import pg from 'pg';
import { scratchDatabase, startTestApp, testDatabaseUrl, useTestApp } from './support/app.js';
import { client } from './support/http.js';

describe('health', () => {
  const { app, api } = useTestApp();

  it('answers liveness without a token', async () => {
    const res = await api.get('/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: 'OK', message: 'Health check passed' });
  });

  it('answers liveness with the bytes and headers of any enveloped answer, HEAD included', async () => {
    const live = await fetch(`${app.url}/api/health`);
    const ready = await fetch(`${app.url}/api/health/ready`);
    expect(await live.text()).toBe('{"success":true,"data":"OK","message":"Health check passed"}');
    const names = (response: Response) =>
      [...response.headers.keys()].filter((name) => name !== 'content-length').sort();
    expect(names(live)).toEqual(names(ready));
    for (const name of names(live).filter((n) => !['date', 'x-request-id', 'keep-alive'].includes(n)))
      expect([name, live.headers.get(name)]).toEqual([name, ready.headers.get(name)]);
    expect(live.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(live.headers.get('content-length')).toBe('60');
    expect(live.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const head = await fetch(`${app.url}/api/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers readiness with the database up', async () => {
    const res = await api.get('/api/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { database: 'up' }, message: 'Ready' });
  });

  it('answers 503 while its database refuses connections, and recovers without a restart', async () => {
    // A database of its own, so that blocking it affects only this service instance.
    const database = await scratchDatabase('mas_ready');
    const name = database.name;
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    const isolated = await startTestApp({ databaseUrl: database.url });
    const isolatedApi = client(isolated.url);
    try {
      expect((await isolatedApi.get('/api/health/ready')).status).toBe(200);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);

      const down = await isolatedApi.get('/api/health/ready');
      expect(down.status).toBe(503);
      expect(down.body).toEqual({
        success: false,
        data: { database: 'down' },
        message: 'Service unavailable',
      });
      expect((await isolatedApi.get('/api/health')).status).toBe(200);

      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      const up = await isolatedApi.get('/api/health/ready');
      expect(up.status).toBe(200);
      expect(up.body.data).toEqual({ database: 'up' });
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await isolated.close();
      await admin.end();
    }
  });

  it('answers readiness 200 while every connection of the request pool is taken (its own connection)', async () => {
    // Every pooled connection held, as under a load that saturates the pool: readiness must not queue behind it.
    const held = await Promise.all(
      Array.from({ length: app.config.dbPoolSize }, async () => {
        const runner = app.dataSource.createQueryRunner();
        await runner.connect();
        return runner;
      }),
    );
    try {
      const started = Date.now();
      const res = await api.get('/api/health/ready');
      expect(res).toMatchObject({ status: 200, body: { data: { database: 'up' } } });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await Promise.all(held.map((runner) => runner.release()));
    }
  });
});
