import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hashPassword, verifyPassword } from './argon2.js';

/** Marks the hash of a generated password (see {@link PasswordHasher.generate}). */
const GENERATED_PREFIX = 'sha256$';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

@Injectable()
export class PasswordHasher {
  /** A hash of a random password, verified against when a username is unknown so timing matches. */
  private readonly decoy: Promise<string> = hashPassword(`decoy-${Math.random()}`);

  hash(password: string): Promise<string> {
    return hashPassword(password);
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
      await this.decoy.then((decoy) => verifyPassword(decoy, password)).catch(() => false);
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    }
    try {
      return await verifyPassword(hash ?? (await this.decoy), password);
    } catch {
      return false;
    }
  }
}
