import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiOk } from '../core/openapi.js';
import { Public, ResponseMessage } from '../core/decorators.js';
import { AppError } from '../core/errors.js';

const PING_TIMEOUT_MS = 1000;

const DATABASE_STATUS = {
  type: 'object',
  required: ['database'],
  additionalProperties: false,
  properties: { database: { type: 'string', enum: ['up', 'down'] } },
};

/** Kubernetes probes: liveness never touches the database; readiness pings it with a short timeout. */
@Public()
@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
  async ready(): Promise<{ database: 'up' }> {
    if (!(await this.pingDatabase())) throw new AppError(503, 'Service unavailable', { database: 'down' });
    return { database: 'up' };
  }

  /** `SELECT 1` within a second; a pool that cannot hand out a connection counts as down too. */
  private async pingDatabase(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>(
      (resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)),
    );
    const ping = this.dataSource.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
