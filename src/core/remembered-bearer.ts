import { type IncomingHttpHeaders } from 'node:http';
import { type AuthUser } from './decorators.js';

/** What the bearer check reads of a request. */
export interface BearerRequest {
  headers: IncomingHttpHeaders;
  id?: string;
  ip?: string;
}

/**
 * The bearer strategy's answer for a token it verified before (its signature, claims and expiry), without
 * passport's per-request context: the user re-check still runs, so the promise resolves to the caller or
 * rejects with the error the strategy would have reported. Undefined when the token is not remembered (absent,
 * never seen, expired): passport then authenticates the request as usual. Provided by auth/ (the strategy).
 */
export abstract class RememberedBearer {
  abstract remembered(request: BearerRequest): Promise<AuthUser> | undefined;

  /**
   * The guard let `caller` through to the route (its scope included): what counts as a use is recorded now, so
   * a refused call never counts (an integration token's `last_used_at`). Undefined when there is nothing to do.
   */
  abstract admitted(caller: AuthUser): Promise<void> | undefined;
}
