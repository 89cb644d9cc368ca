import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';
import { type AuthUser } from '../core/decorators.js';
import { type RequestContext } from './audit-actions.js';

/** The caller, Fastify's request id (an `X-Request-Id` from a proxy, else a UUID) and the client address. */
export const RequestCtx = createParamDecorator(
  (_data: unknown, context: ExecutionContext): RequestContext => {
    const request = context.switchToHttp().getRequest<FastifyRequest & { user?: AuthUser }>();
    return { actorId: request.user?.id ?? null, requestId: request.id, clientIp: request.ip };
  },
);
