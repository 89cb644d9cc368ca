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
}
