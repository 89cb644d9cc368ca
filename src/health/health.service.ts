import { Inject, Injectable } from '@nestjs/common';
import { type Redis } from 'ioredis';
import { DatabaseProbe } from '../database/database-probe.js';
import { REDIS } from '../redis/redis.module.js';

const PING_TIMEOUT_MS = 1000;

/** Resolves to `fallback` when `work` has not settled within the ping timeout. */
async function within<T>(work: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), PING_TIMEOUT_MS)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the service can do its work: the database answers within a second (and how Redis is, if used). */
@Injectable()
export class HealthService {
  constructor(
    private readonly database: DatabaseProbe,
    @Inject(REDIS) private readonly redis: Redis | null,
  ) {}

  /** PING within a second, or undefined when REDIS_URL is unset. */
  redisUp(): Promise<boolean | undefined> {
    if (!this.redis) return Promise.resolve(undefined);
    return within(
      this.redis.ping().then(
        (reply) => reply === 'PONG',
        () => false,
      ),
      false,
    );
  }

  /** `SELECT 1` within a second; a pool that cannot hand out a connection counts as down too. */
  databaseUp(): Promise<boolean> {
    return this.database.ping(PING_TIMEOUT_MS);
  }
}
