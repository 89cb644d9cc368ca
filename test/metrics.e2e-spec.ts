import { Metrics, MetricsServer } from '../src/observability/metrics.js';
import pg from 'pg';
import { testDatabaseUrl, useTestApp } from './support/app.js';
import { makeUser } from './support/factories.js';
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
