import { type ExecutionContext, type Type } from '@nestjs/common';
import { type Reflector } from '@nestjs/core';
import {
  FAILURE_MESSAGE,
  INTEGRATION_ACCESS,
  type IntegrationAccess,
  IS_ADMIN_ONLY,
  IS_PUBLIC,
  RESPONSE_MESSAGE,
} from './decorators.js';
import { INTERNAL_ERROR_MESSAGE } from './errors.js';
import { OWN_ANSWERS } from './own-answers.js';
import { PAGED_LIST } from './paging-links.js';
import { SINGLE_READ } from './validators.js';

/** What the guards and the envelope read of a route's decorators. */
export interface RouteMetadata {
  isPublic: boolean;
  adminOnly: boolean;
  /** The envelope's message of a success. */
  message: string;
  /** The 500 message of an unexpected failure. */
  failure: string;
  /** Where integration tokens are accepted; undefined: nowhere on this route. */
  integration: IntegrationAccess | undefined;
  /** The route answers without the envelope (own-answers.ts). */
  bare: boolean;
  /** A paged list, answered with a `Link` header (paging-links.ts). */
  paged: boolean;
  /** A single read (or a write answering its body), answered with an `ETag` (validators.ts). */
  singleRead: boolean;
}

/**
 * Decorators are fixed once the application is built, so each handler's metadata is read once (four
 * `Reflect.getMetadata` walks per request otherwise, two of them over the handler and its class).
 */
const byHandler = new WeakMap<object, RouteMetadata>();

export function routeMetadata(reflector: Reflector, context: ExecutionContext): RouteMetadata {
  const handler = context.getHandler();
  let metadata = byHandler.get(handler);
  if (metadata === undefined) {
    metadata = handlerMetadata(reflector, handler, context.getClass());
    byHandler.set(handler, metadata);
  }
  return metadata;
}

/** The metadata of `handler`, a method of `controller` (read once per handler by {@link routeMetadata}). */
export function handlerMetadata(
  reflector: Reflector,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- what Nest hands over as a handler
  handler: Function,
  controller: Type,
): RouteMetadata {
  const targets = [handler, controller];
  return {
    isPublic: reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets) === true,
    adminOnly: reflector.getAllAndOverride<boolean | undefined>(IS_ADMIN_ONLY, targets) === true,
    message: reflector.get<string | undefined>(RESPONSE_MESSAGE, handler) ?? 'OK',
    failure: reflector.get<string | undefined>(FAILURE_MESSAGE, handler) ?? INTERNAL_ERROR_MESSAGE,
    integration: reflector.getAllAndOverride<IntegrationAccess | undefined>(INTEGRATION_ACCESS, targets),
    bare: reflector.get<unknown>(OWN_ANSWERS, handler) !== undefined,
    paged: reflector.get<boolean | undefined>(PAGED_LIST, handler) === true,
    singleRead: reflector.get<boolean | undefined>(SINGLE_READ, handler) === true,
  };
}
