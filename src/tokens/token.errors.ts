import { fixedError } from '../core/errors.js';

export const TOKEN_NOT_FOUND_MESSAGE = 'Token not found';

/** An unknown id, or a token already revoked. */
export class TokenNotFound extends fixedError(404, TOKEN_NOT_FOUND_MESSAGE) {}
