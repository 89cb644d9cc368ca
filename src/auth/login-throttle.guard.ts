import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';
import { AuthService } from './auth.service.js';

/**
 * Runs before body validation, so a throttled client is refused whatever it sends. The attempt itself is
 * admitted (its place in the counters reserved) by AuthService.login once the body is valid.
 */
@Injectable()
export class LoginThrottleGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const body = request.body as { username?: unknown } | null | undefined;
    const username = typeof body?.username === 'string' ? body.username : undefined;
    await this.auth.refuseIfThrottled(username, {
      actorId: null,
      requestId: request.id,
      clientIp: request.ip,
    });
    return true;
  }
}
