import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type AuthUser, IS_PUBLIC } from './decorators.js';
import { AppError, AuthenticationRequired, InvalidToken } from './errors.js';

/** Global: every route needs a valid bearer token unless marked `@Public()`. */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    return isPublic ? true : super.canActivate(context);
  }

  override handleRequest<T = AuthUser>(
    error: unknown,
    user: T | false,
    info: unknown,
    context: ExecutionContext,
  ): T {
    if (error instanceof AppError) throw error;
    if (error) throw error as Error;
    if (!user) {
      // passport-jwt reports a missing or non-Bearer Authorization header as "No auth token".
      const missing = info instanceof Error && info.message === 'No auth token';
      throw missing ? new AuthenticationRequired() : new InvalidToken();
    }
    // Every later log line of this request (errors, the completion line) names the caller.
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    request.log = request.log.child({ userId: (user as unknown as AuthUser).id });
    http.getResponse<FastifyReply>().log = request.log;
    return user;
  }
}
