// Operations: the health probes and the Prometheus metrics.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import pg from 'pg';
import { Metrics, MetricsServer } from '../src/observability/metrics.js';
import { scratchDatabase, startTestApp, testDatabaseUrl, useTestApp } from './support/app.js';
import { makeUser } from './support/factories.js';
import { client } from './support/http.js';
import { waitFor } from './support/wait-for.js';

/** One sample of a Prometheus text exposition: `name{label="value",…} number`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
    )) {
      labels[name] = value;
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels` (0 when there is none yet). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

describe('Prometheus metrics on METRICS_PORT', () => {
  const POOL_SIZE = 3;
  const { app, api } = useTestApp({ metricsPort: 0, metricsHost: '127.0.0.1', dbPoolSize: POOL_SIZE });
  const metricsUrl = () => {
    const url = app.service.app.get(MetricsServer).url;
    if (!url) throw new Error('the metrics server is not listening');
    return url;
  };
  const scrape = async () => {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  };
  beforeEach(() => app.reset());

  it('serves /metrics on its own port only, not on the API port', async () => {
    expect(new URL(metricsUrl()).port).not.toBe(new URL(app.url).port);
    expect((await api.get('/metrics')).status).toBe(404);
    expect((await api.get('/api/metrics')).status).toBe(404);
    expect((await fetch(new URL('/other', metricsUrl()))).status).toBe(404);
  });

  it('counts requests by method, route pattern and status, with their durations', async () => {
    const route = { method: 'GET', route: '/api/modules/:module_id', status_code: '401' };
    const before = await scrape();
    for (const id of [1, 22, 333]) expect((await api.get(`/api/modules/${id}`)).status).toBe(401);
    expect((await api.get('/api/no-such-route/4444')).status).toBe(404);
    const after = await scrape();

    expect(valueOf(after, 'http_request_duration_seconds_count', route)).toBe(
      valueOf(before, 'http_request_duration_seconds_count', route) + 3,
    );
    const sum = valueOf(after, 'http_request_duration_seconds_sum', route);
    expect(sum).toBeGreaterThan(valueOf(before, 'http_request_duration_seconds_sum', route));
    expect(valueOf(after, 'http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(
      valueOf(after, 'http_request_duration_seconds_count', route),
    );
    const unmatched = { method: 'GET', route: 'unmatched', status_code: '404' };
    expect(valueOf(after, 'http_request_duration_seconds_count', unmatched)).toBe(
      valueOf(before, 'http_request_duration_seconds_count', unmatched) + 1,
    );
    // Route patterns only: raw URLs never become label values.
    const routes = new Set(after.filter((s) => s.labels.route !== undefined).map((s) => s.labels.route));
    expect([...routes].filter((r) => /\d/.test(r))).toEqual([]);
  });

  it('counts a login refused by the throttle', async () => {
    await makeUser(app.dataSource, { username: 'throttled' });
    const before = valueOf(await scrape(), 'login_throttle_refusals_total');
    const attempt = () =>
      api.post('/api/auth/login', { body: { username: 'throttled', password: 'wrong-password' } });
    for (let i = 0; i < 10; i++) expect((await attempt()).status).toBe(401);
    expect(valueOf(await scrape(), 'login_throttle_refusals_total')).toBe(before);
    expect((await attempt()).status).toBe(429);
    expect((await attempt()).status).toBe(429);
    expect(valueOf(await scrape(), 'login_throttle_refusals_total')).toBe(before + 2);
  });

  it("reports the database pool's size, idle connections and waiting queries", async () => {
    const quiet = await scrape();
    expect(valueOf(quiet, 'db_pool_max_connections')).toBe(POOL_SIZE);
    expect(valueOf(quiet, 'db_pool_waiting_requests')).toBe(0);
    expect(valueOf(quiet, 'db_pool_idle_connections')).toBe(valueOf(quiet, 'db_pool_connections'));

    // Two queries more than the pool holds, each waiting on a lock held outside the pool until the metrics
    // show the queue: every connection busy, two queries queued.
    const holder = new pg.Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    let busy: Sample[];
    try {
      await holder.query('SELECT pg_advisory_lock(4711)');
      const waiting = Array.from({ length: POOL_SIZE + 2 }, () =>
        app.dataSource.query('SELECT pg_advisory_xact_lock_shared(4711)'),
      );
      try {
        busy = await waitFor(
          async () => {
            const samples = await scrape();
            return valueOf(samples, 'db_pool_waiting_requests') === 2 && samples;
          },
          { timeoutMs: 5000, what: 'db_pool_waiting_requests to reach 2' },
        );
      } finally {
        await holder.query('SELECT pg_advisory_unlock(4711)');
        await Promise.all(waiting);
      }
    } finally {
      await holder.end();
    }
    expect(valueOf(busy, 'db_pool_connections')).toBe(POOL_SIZE);
    expect(valueOf(busy, 'db_pool_idle_connections')).toBe(0);
    expect(valueOf(busy, 'db_pool_waiting_requests')).toBe(2);

    const after = await scrape();
    expect(valueOf(after, 'db_pool_waiting_requests')).toBe(0);
    expect(valueOf(after, 'db_pool_idle_connections')).toBe(POOL_SIZE);
  });

  it('includes the default process metrics', async () => {
    const samples = await scrape();
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });
});

describe('metrics without METRICS_PORT', () => {
  const { app, api } = useTestApp();

  it('serves no metrics and times no requests', async () => {
    expect(app.service.app.get(MetricsServer).url).toBeUndefined();
    expect((await api.get('/api/health')).status).toBe(200);
    const histogram = await app.service.app
      .get(Metrics)
      .registry.getSingleMetric('http_request_duration_seconds')!
      .get();
    expect(histogram.values).toEqual([]);
  });
});

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
