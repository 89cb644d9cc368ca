import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

const METRICS_PATH = '/metrics';
/** The route label of a request no route matched (404s), so unknown URLs cannot grow the label set. */
const UNMATCHED_ROUTE = 'unmatched';

/** What node-postgres' Pool (TypeORM's `driver.master`) reports about itself. */
interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max: number };
}

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one, so several
 * services in one process, as in the tests, do not collide). Request timing and process metrics are collected
 * only when `METRICS_PORT` is set; the counters and pool gauges cost nothing until scraped.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly enabled: boolean;
  private readonly requestDuration: Histogram<'method' | 'route' | 'status_code'>;
  private readonly throttleRefusals: Counter;
  private readonly webhookDeliveries: Counter<'outcome'>;
  private oldestUndelivered: (() => Promise<Date | null>) | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @InjectDataSource() dataSource: DataSource) {
    this.enabled = config.metricsPort !== undefined;
    const registers = [this.registry];
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status: duration in seconds (its _count is the request count)',
      labelNames: ['method', 'route', 'status_code'],
      registers,
    });
    this.throttleRefusals = new Counter({
      name: 'login_throttle_refusals_total',
      help: 'Login attempts refused with 429 because of too many recent failures',
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, retrying (another attempt is scheduled), failed (given up)',
      labelNames: ['outcome'],
      registers,
    });
    const oldest = () => this.oldestUndelivered;
    new Gauge({
      name: 'webhook_oldest_undelivered_event_age_seconds',
      help: 'Age of the oldest change event not yet delivered to every webhook that takes it (0 when none waits)',
      registers,
      async collect() {
        const source = oldest();
        if (!source) return;
        const at = await source();
        this.set(at === null ? 0 : Math.max(0, (Date.now() - at.getTime()) / 1000));
      },
    });
    const pool = (): PgPool | undefined => (dataSource.driver as { master?: PgPool }).master;
    const poolGauge = (name: string, help: string, read: (pool: PgPool) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const current = pool();
          if (current) this.set(read(current));
        },
      });
    poolGauge(
      'db_pool_max_connections',
      'Connections the database pool may open (DB_POOL_SIZE)',
      (p) => p.options.max,
    );
    poolGauge(
      'db_pool_connections',
      'Connections the database pool holds open, busy or idle',
      (p) => p.totalCount,
    );
    poolGauge(
      'db_pool_idle_connections',
      'Open connections of the database pool not in use',
      (p) => p.idleCount,
    );
    poolGauge(
      'db_pool_waiting_requests',
      'Queries waiting for a connection from the pool',
      (p) => p.waitingCount,
    );
    if (this.enabled) collectDefaultMetrics({ register: this.registry });
  }

  webhookDelivery(outcome: 'delivered' | 'retrying' | 'failed'): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** The webhooks feature tells where the oldest undelivered event's time comes from (read at scrape time). */
  reportOldestUndelivered(source: () => Promise<Date | null>): void {
    this.oldestUndelivered = source;
  }

  loginThrottled(): void {
    this.throttleRefusals.inc();
  }

  /**
   * One `onResponse` hook (when enabled): the route label is the pattern the router matched
   * (`/api/modules/:module_id`), never the raw URL, and the duration is the one Fastify measured already.
   */
  instrument(fastify: FastifyInstance): void {
    if (!this.enabled) return;
    const histogram = this.requestDuration;
    fastify.addHook('onResponse', (request, reply, done) => {
      histogram.observe(
        {
          method: request.method,
          route: request.routeOptions.url ?? UNMATCHED_ROUTE,
          status_code: reply.statusCode,
        },
        reply.elapsedTime / 1000,
      );
      done();
    });
  }
}

/** Serves `GET /metrics` on `METRICS_HOST:METRICS_PORT`, a listener apart from the API's, while the app runs. */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | undefined;
  /** e.g. http://127.0.0.1:9464/metrics, once listening. */
  url: string | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === undefined) return;
    const { registry } = this.metrics;
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== METRICS_PATH) {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
        return;
      }
      registry.metrics().then(
        (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (error: unknown) => {
          this.logger.error('Collecting metrics failed', error);
          response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics failed\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort, this.config.metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const { address, port } = server.address() as AddressInfo;
    const host = address === '0.0.0.0' || address === '::' ? 'localhost' : address;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${METRICS_PATH}`;
    this.logger.log(`Prometheus metrics on ${this.url}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

@Global()
@Module({ providers: [Metrics, MetricsServer], exports: [Metrics] })
export class MetricsModule {}
