import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiOk } from '../openapi/openapi.js';
import { Public, ResponseMessage } from '../core/decorators.js';
import { AppError } from '../core/errors.js';
import { HealthService } from './health.service.js';

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

/** Kubernetes probes: liveness never touches the database; readiness pings it with a short timeout. */
@Public()
@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ResponseMessage('Health check passed')
  @ApiOperation({ summary: 'Liveness: the process answers (no database access)' })
  @ApiOk(200, 'Health check passed', { type: 'string', enum: ['OK'] })
  // Documents the route: the service answers it in Fastify, without this handler (liveness.ts).
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
    const [database, redis] = await Promise.all([this.health.databaseUp(), this.health.redisUp()]);
    const status: Readiness = { database: database ? 'up' : 'down' };
    if (redis !== undefined) status.redis = redis ? 'up' : 'down';
    if (!database) throw new AppError(503, 'Service unavailable', status);
    return status;
  }
}
