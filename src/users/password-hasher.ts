import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

// argon2id with OWASP's minimum profile (19 MiB, 2 passes); hashing runs on libuv's thread pool.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

@Injectable()
export class PasswordHasher {
  /** A hash of a random password, verified against when a username is unknown so timing matches. */
  private readonly decoy: Promise<string> = argon2.hash(`decoy-${Math.random()}`, OPTIONS);

  hash(password: string): Promise<string> {
    return argon2.hash(password, OPTIONS);
  }

  async verify(hash: string | undefined, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash ?? (await this.decoy), password);
    } catch {
      return false;
    }
  }
}
