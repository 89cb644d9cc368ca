import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

// argon2id with OWASP's minimum profile (19 MiB, 2 passes); hashing runs on libuv's thread pool.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
/** Marks the hash of a generated password (see {@link PasswordHasher.generate}). */
const GENERATED_PREFIX = 'sha256$';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

@Injectable()
export class PasswordHasher {
  /** A hash of a random password, verified against when a username is unknown so timing matches. */
  private readonly decoy: Promise<string> = argon2.hash(`decoy-${Math.random()}`, OPTIONS);

  hash(password: string): Promise<string> {
    return argon2.hash(password, OPTIONS);
  }

  /**
   * A random password (192 bits, base64url) and its hash. A secret that cannot be guessed needs no slow hash:
   * SHA-256 keeps an import of thousands of users from spending minutes in argon2, and the user's first
   * password change stores an argon2 hash as usual.
   */
  generate(): { password: string; hash: string } {
    const password = randomBytes(24).toString('base64url');
    return { password, hash: GENERATED_PREFIX + sha256(password).toString('hex') };
  }

  async verify(hash: string | undefined, password: string): Promise<boolean> {
    if (hash?.startsWith(GENERATED_PREFIX)) {
      const expected = Buffer.from(hash.slice(GENERATED_PREFIX.length), 'hex');
      const actual = sha256(password);
      // Same work as a wrong password would cost, so timing does not tell generated accounts apart.
      await this.decoy.then((decoy) => argon2.verify(decoy, password)).catch(() => false);
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    }
    try {
      return await argon2.verify(hash ?? (await this.decoy), password);
    } catch {
      return false;
    }
  }
}
