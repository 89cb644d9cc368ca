import { Injectable } from '@nestjs/common';
import { hashPassword, verifyPassword } from './argon2.js';

@Injectable()
export class PasswordHasher {
  /** A hash of a random password, verified against when a username is unknown so timing matches. */
  private readonly decoy: Promise<string> = hashPassword(`decoy-${Math.random()}`);

  hash(password: string): Promise<string> {
    return hashPassword(password);
  }

  async verify(hash: string | undefined, password: string): Promise<boolean> {
    try {
      return await verifyPassword(hash ?? (await this.decoy), password);
    } catch {
      return false;
    }
  }
}
