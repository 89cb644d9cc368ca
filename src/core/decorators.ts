import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';

export const IS_PUBLIC = 'isPublic';
export const IS_ADMIN_ONLY = 'isAdminOnly';
export const RESPONSE_MESSAGE = 'responseMessage';
export const FAILURE_MESSAGE = 'failureMessage';

/** Opens a route to callers without a token (the global JWT guard closes every other). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** Restricts a route to administrators (403 otherwise). */
export const AdminOnly = () => SetMetadata(IS_ADMIN_ONLY, true);

/** The envelope's `message` for a successful response of this route. */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/** The 500 message of this route when the database (or anything unexpected) fails. */
export const FailureMessage = (message: string) => SetMetadata(FAILURE_MESSAGE, message);

/** The authenticated caller as the JWT guard established it. */
export interface AuthUser {
  id: number;
  /** True only when both the token's claim and the stored flag say admin. */
  admin: boolean;
}

export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthUser => {
  const request = context.switchToHttp().getRequest<FastifyRequest & { user?: AuthUser }>();
  if (!request.user) throw new Error('CurrentUser used on a public route');
  return request.user;
});

/** A handler result whose envelope message is only known at run time (`Deleted 2/3 modules`). */
export class WithMessage<T> {
  constructor(
    readonly data: T,
    readonly message: string,
  ) {}
}
