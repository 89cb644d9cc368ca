import {
  Global,
  Inject,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';

/** Injection token of the shared {@link Redis} client, or null when REDIS_URL is unset. */
export const REDIS = Symbol('REDIS');

/** How long a Redis command may take before the caller gives up on it (and fails open). */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/** How long start-up waits for a first connection; past it the service starts anyway. */
const FIRST_CONNECT_WAIT_MS = 2000;

/**
 * Remembers whether Redis is reachable, so an outage is logged once when it starts and once when it ends,
 * however many requests meet it in between.
 */
export class RedisOutage {
  private down = false;

  constructor(private readonly logger: Logger) {}

  failed(error: unknown): void {
    if (this.down) return;
    this.down = true;
    this.logger.warn('Redis is unreachable; login throttling fails open until it is back', error);
  }

  succeeded(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.log('Redis is reachable again');
  }
}

function createRedisClient(url: string, outage: RedisOutage): Redis {
  const client = new Redis(url, {
    // A command while disconnected fails at once instead of queueing: the throttle fails open.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    // Keep reconnecting for as long as the process lives, at most every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Without a listener ioredis prints every connection error; the outage is logged once instead.
  client.on('error', (error) => outage.failed(error));
  client.on('ready', () => outage.succeeded());
  return client;
}

/** Lives as long as the application; closes the client at shutdown. */
class RedisLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly client: Redis | null) {}

  async onModuleInit(): Promise<void> {
    const client = this.client;
    if (!client || client.status === 'ready') return;
    // Give a reachable Redis a moment so the first logins are counted; an unreachable one does not block start.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FIRST_CONNECT_WAIT_MS);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.client) return;
    await this.client.quit().catch(() => this.client!.disconnect());
  }
}

/** The optional Redis connection (REDIS_URL) shared by the features that keep cross-replica state there. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        config.redisUrl ? createRedisClient(config.redisUrl, new RedisOutage(new Logger('Redis'))) : null,
    },
    RedisLifecycle,
  ],
  exports: [REDIS],
})
export class RedisModule {}
