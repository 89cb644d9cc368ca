import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';

export const IS_PUBLIC = 'isPublic';
export const IS_ADMIN_ONLY = 'isAdminOnly';
export const RESPONSE_MESSAGE = 'responseMessage';
export const FAILURE_MESSAGE = 'failureMessage';
export const INTEGRATION_ACCESS = 'integrationAccess';

/** Opens a route to callers without a token (the global JWT guard closes every other). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** Restricts a route to administrators (403 otherwise). */
export const AdminOnly = () => SetMetadata(IS_ADMIN_ONLY, true);

/** The envelope's `message` for a successful response of this route. */
export const ResponseMessage = (message: string) => SetMetadata(RESPONSE_MESSAGE, message);

/** The 500 message of this route when the database (or anything unexpected) fails. */
export const FailureMessage = (message: string) => SetMetadata(FAILURE_MESSAGE, message);

/**
 * Where integration tokens (docs/api.md §14) are accepted: a route marked with a scope lets a token holding it
 * through (as an administrator would be). A token lacking the scope gets `wrongScope` (default 401 `Invalid or
 * expired token`); `only` refuses every other token (a user's) with 401 `Invalid or expired token`. Integration
 * tokens on any unmarked route: 401 `Invalid or expired token`.
 */
export interface IntegrationAccess {
  scope: string;
  only?: boolean;
  wrongScope?: () => Error;
}

export const IntegrationTokens = (access: IntegrationAccess) => SetMetadata(INTEGRATION_ACCESS, access);

/** An integration token's part of the caller. */
export interface IntegrationCaller {
  tokenId: number;
  scopes: readonly string[];
}

/** The authenticated caller as the JWT guard established it. */
export interface AuthUser {
  /** 0 for an integration token (no person). */
  id: number;
  /** True only when both the token's claim and the stored flag say admin. */
  admin: boolean;
  /** Set when the caller is an integration token rather than a person. */
  integration?: IntegrationCaller;
  /** Set when the caller signed in with an identity provider's token, not one of this service (docs/sso.md). */
  idp?: true;
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
