import { type ExecutionContext, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { type FastifyRequest } from 'fastify';
import { type AuthUser, type IntegrationAccess } from './decorators.js';
import { AppError, AuthenticationRequired, InvalidToken } from './errors.js';
import { RememberedBearer } from './remembered-bearer.js';
import { routeMetadata } from './route-metadata.js';

/** What passport (through @nestjs/passport) leaves on an authenticated request, and the fast path too. */
type AuthenticatedRequest = FastifyRequest & { user?: AuthUser; authInfo?: unknown };

/**
 * Global: every route needs a valid bearer token unless marked `@Public()`.
 *
 * A token the strategy verified before (a client sends the same one with every request) is answered by the
 * strategy directly ({@link RememberedBearer}): passport's per-request context (an authenticate closure, a
 * strategy object with five callbacks, four methods added to the request, two promises) costs more than the
 * check itself. Any other token, and a missing one, goes through passport as before; both paths end in
 * {@link handleRequest}, so the answers are the same.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') implements OnModuleInit {
  private bearer: RememberedBearer | undefined;

  constructor(
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
  ) {
    super();
  }

  onModuleInit(): void {
    try {
      this.bearer = this.moduleRef.get(RememberedBearer, { strict: false });
    } catch {
      // No strategy remembers tokens (an application without auth/): passport checks every request.
      this.bearer = undefined;
    }
  }

  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (routeMetadata(this.reflector, context).isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const remembered = this.bearer?.remembered(request);
    if (remembered === undefined) return super.canActivate(context) as Promise<boolean>;
    return remembered.then(
      (user) => {
        request.authInfo = undefined;
        const caller = this.handleRequest(null, user, undefined, context);
        request.user = caller;
        const use = this.bearer!.admitted(caller);
        return use === undefined ? true : use.then(() => true);
      },
      (error: unknown) => this.handleRequest(error, false, undefined, context),
    );
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
    // Every later log line of this request (errors, the completion line) names the caller. Fastify gives each
    // request a child logger of its own (bound to its request id; reply.log is the same object), so the binding
    // is added to it in place: a grandchild per request would copy the logger and re-serialise its bindings.
    const log = context.switchToHttp().getRequest<FastifyRequest>().log as FastifyRequest['log'] & {
      setBindings?: (bindings: Record<string, unknown>) => void;
    };
    const caller = user as unknown as AuthUser;
    checkIntegrationAccess(caller, routeMetadata(this.reflector, context).integration);
    log.setBindings?.(caller.integration ? { tokenId: caller.integration.tokenId } : { userId: caller.id });
    return user;
  }
}

/** Integration tokens only where their scope applies, and user tokens not on routes only for them (§14). */
function checkIntegrationAccess(caller: AuthUser, access: IntegrationAccess | undefined): void {
  if (caller.integration === undefined) {
    if (access?.only) throw new InvalidToken();
    return;
  }
  if (access === undefined) throw new InvalidToken();
  if (!caller.integration.scopes.includes(access.scope)) throw access.wrongScope?.() ?? new InvalidToken();
}
