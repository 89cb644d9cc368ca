import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readOrCreateSecret } from './secret-file.js';

/** The shortest HS256 secret accepted, stored or configured. */
const MIN_JWT_SECRET_LENGTH = 32;

/**
 * The configured secret, or one generated on first start and kept (mode 0600) in the data directory. A stored
 * secret shorter than {@link MIN_JWT_SECRET_LENGTH} stops the start: signing with it would let anyone forge tokens.
 */
export async function resolveJwtSecret(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured !== undefined) return configured;
  return readOrCreateSecret(path.join(dataDir, 'jwt-secret'), {
    minLength: MIN_JWT_SECRET_LENGTH,
    generate: () => randomBytes(48).toString('base64url'),
    remedy:
      'Set JWT_SECRET, or delete the file to have a new secret generated (tokens signed with the old one stop working).',
  });
}
