import { ARGON2ID, hashPassword, verifyPassword } from './argon2.js';
import { PasswordHasher } from './password-hasher.js';

/**
 * Made by the service before it moved from `argon2` (node-argon2 0.45, a native addon built at install) to
 * `@node-rs/argon2`: argon2.hash('correct horse battery staple', { type: argon2id, memoryCost: 19456,
 * timeCost: 2, parallelism: 1 }). Every password stored so far looks like this and must keep working.
 */
const LEGACY_PASSWORD = 'correct horse battery staple';
const LEGACY_HASH =
  '$argon2id$v=19$m=19456,p=1,t=2$WIAHzTz+tT+/iI9e7Q/2Cw$MO6cwr/mEgAF7sAtZ7KeOJlBex5KkHQ2vmvLviDBm4k';

describe('argon2id password hashes', () => {
  const hasher = new PasswordHasher();

  it('verifies a hash made by the previous argon2 library, and only for its password', async () => {
    await expect(verifyPassword(LEGACY_HASH, LEGACY_PASSWORD)).resolves.toBe(true);
    await expect(hasher.verify(LEGACY_HASH, LEGACY_PASSWORD)).resolves.toBe(true);
    await expect(hasher.verify(LEGACY_HASH, 'correct horse battery stapler')).resolves.toBe(false);
  });

  it('makes argon2id PHC strings with the same profile, salted per hash', async () => {
    const [first, second] = await Promise.all([hashPassword(LEGACY_PASSWORD), hasher.hash(LEGACY_PASSWORD)]);
    for (const phc of [first, second]) {
      expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
      await expect(hasher.verify(phc, LEGACY_PASSWORD)).resolves.toBe(true);
    }
    expect(first).not.toBe(second);
    expect(ARGON2ID).toMatchObject({ memoryCost: 19_456, timeCost: 2, parallelism: 1 });
  });

  it('answers false, never throws, for an unknown user or a malformed hash', async () => {
    await expect(hasher.verify(undefined, LEGACY_PASSWORD)).resolves.toBe(false);
    await expect(hasher.verify('$argon2id$v=19$broken', LEGACY_PASSWORD)).resolves.toBe(false);
    await expect(hasher.verify('', LEGACY_PASSWORD)).resolves.toBe(false);
  });
});
