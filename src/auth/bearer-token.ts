import { type IncomingHttpHeaders } from 'node:http';

/** The scheme in any letter case, whitespace, then exactly one token and nothing after it (docs/api.md §2). */
const BEARER = /^bearer\s+(\S+)$/i;

/**
 * The token of an `Authorization: Bearer <token>` header, or null for any other header (answered 401
 * `Authentication required`). passport-jwt's own extractor ignores whatever follows the token.
 */
export function bearerToken(request: { headers: IncomingHttpHeaders }): string | null {
  const header = request.headers.authorization;
  return typeof header === 'string' ? (BEARER.exec(header)?.[1] ?? null) : null;
}
