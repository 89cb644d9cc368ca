import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';
import { AuditService } from '../audit/audit.service.js';
import { Metrics } from '../core/metrics.js';
import { TooManyLoginAttempts } from './auth.errors.js';
import { LoginThrottle } from './login-throttle.js';

/** Runs before body validation, so a throttled client is refused whatever it sends. */
@Injectable()
export class LoginThrottleGuard implements CanActivate {
  constructor(
    private readonly throttle: LoginThrottle,
    private readonly metrics: Metrics,
    private readonly audit: AuditService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const body = request.body as { username?: unknown } | null | undefined;
    const username = typeof body?.username === 'string' ? body.username : undefined;
    if (await this.throttle.isBlocked(username, request.ip)) {
      this.metrics.loginThrottled();
      const where = { actorId: null, requestId: request.id, clientIp: request.ip };
      for (const key of await this.throttle.newlyBlocked(username, request.ip))
        await this.audit.record(undefined, where, {
          action: 'auth.login_throttled',
          targetType: null,
          targetIds: [],
          summary: { key },
        });
      throw new TooManyLoginAttempts();
    }
    return true;
  }
}
