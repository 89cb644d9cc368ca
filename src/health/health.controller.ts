import { Controller, Get } from '@nestjs/common';
import { TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public, ResponseMessage } from '../core/decorators.js';
import { AppError } from '../core/errors.js';

/** Kubernetes probes: liveness never touches the database; readiness pings it with a short timeout. */
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly database: TypeOrmHealthIndicator) {}

  @Get()
  @ResponseMessage('Health check passed')
  live(): string {
    return 'OK';
  }

  @Get('ready')
  @ResponseMessage('Ready')
  async ready(): Promise<{ database: 'up' }> {
    const result = await this.database.pingCheck('database', { timeout: 1000 });
    if (result.database.status !== 'up') throw new AppError(503, 'Service unavailable', { database: 'down' });
    return { database: 'up' };
  }
}
