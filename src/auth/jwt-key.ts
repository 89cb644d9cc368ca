import { createSecretKey, type KeyObject } from 'node:crypto';

/**
 * The HS256 key as a KeyObject. Given a string, jsonwebtoken first tries to parse it as a PEM key on every
 * sign and verify (about 0.6 ms each, measured in bench/); a KeyObject skips that.
 */
export function jwtKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}
