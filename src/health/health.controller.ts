import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { ApiOk } from '../core/openapi.js';
import { Public, ResponseMessage } from '../core/decorators.js';
import { AppError } from '../core/errors.js';
import { REDIS } from '../redis/redis.module.js';

const PING_TIMEOUT_MS = 1000;

const DATABASE_STATUS = {
  type: 'object',
  required: ['database'],
  additionalProperties: false,
  properties: {
    database: { type: 'string', enum: ['up', 'down'] },
    redis: {
      type: 'string',
      enum: ['up', 'down'],
      description: 'Only when REDIS_URL is set. Down does not fail readiness: the login throttle fails open.',
    },
  },
};

type Status = 'up' | 'down';
type Readiness = { database: Status; redis?: Status };

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

/** Kubernetes probes: liveness never touches the database; readiness pings it with a short timeout. */
@Public()
@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis | null,
  ) {}

  @Get()
  @ResponseMessage('Health check passed')
  @ApiOperation({ summary: 'Liveness: the process answers (no database access)' })
  @ApiOk(200, 'Health check passed', { type: 'string', enum: ['OK'] })
  live(): string {
    return 'OK';
  }

  @Get('ready')
  @ResponseMessage('Ready')
  @ApiOperation({ summary: 'Readiness: the database answers a ping within 1 s' })
  @ApiOk(200, 'Ready', DATABASE_STATUS)
  @ApiResponse({
    status: 503,
    description: 'Service unavailable',
    schema: {
      type: 'object',
      required: ['success', 'data', 'message'],
      additionalProperties: false,
      properties: {
        success: { type: 'boolean', enum: [false] },
        data: DATABASE_STATUS,
        message: { type: 'string', example: 'Service unavailable' },
      },
    },
  })
  async ready(): Promise<Readiness> {
    const [database, redis] = await Promise.all([this.pingDatabase(), this.pingRedis()]);
    const status: Readiness = { database: database ? 'up' : 'down' };
    if (redis !== undefined) status.redis = redis ? 'up' : 'down';
    if (!database) throw new AppError(503, 'Service unavailable', status);
    return status;
  }

  /** PING within a second, or undefined when REDIS_URL is unset. */
  private async pingRedis(): Promise<boolean | undefined> {
    if (!this.redis) return undefined;
    return within(
      this.redis.ping().then(
        (reply) => reply === 'PONG',
        () => false,
      ),
      false,
    );
  }

  /** `SELECT 1` within a second; a pool that cannot hand out a connection counts as down too. */
  private pingDatabase(): Promise<boolean> {
    return within(
      this.dataSource.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      false,
    );
  }
}
