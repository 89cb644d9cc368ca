import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type AuthUser } from './decorators.js';
import { PermissionDenied } from './errors.js';
import { routeMetadata } from './route-metadata.js';

/** Global, after the JWT guard: routes marked `@AdminOnly()` need an administrator. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (!routeMetadata(this.reflector, context).adminOnly) return true;
    const user = context.switchToHttp().getRequest<{ user?: AuthUser }>().user;
    // An integration token got here only on a route that accepts its scope (JWT guard).
    if (user?.integration) return true;
    if (!user?.admin) throw new PermissionDenied();
    return true;
  }
}
