import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';
import { type AuthUser } from '../core/decorators.js';
import { type RequestContext } from './audit-actions.js';

/** The caller, Fastify's request id (an `X-Request-Id` from a proxy, else a UUID) and the client address. */
export const RequestCtx = createParamDecorator(
  (_data: unknown, context: ExecutionContext): RequestContext => {
    const request = context.switchToHttp().getRequest<FastifyRequest & { user?: AuthUser }>();
    // An integration token is no person: its writes have a null actor (docs/api.md §14).
    const actorId = request.user?.integration ? null : (request.user?.id ?? null);
    return { actorId, requestId: request.id, clientIp: request.ip };
  },
);
