import { Injectable } from '@nestjs/common';
import { UsersRepository } from './users.repository.js';

export interface UserAccess {
  admin: boolean;
  /** Whole seconds since the epoch of the last password change: tokens with an earlier `iat` are refused. */
  passwordChangedAt: number;
}

const TTL_MS = 5000;
const MAX_ENTRIES = 10_000;

/** The per-request user re-check (exists, admin flag, password-change time), cached for at most 5 s. */
@Injectable()
export class UserAccessCache {
  private readonly entries = new Map<number, { loadedAt: number; access: UserAccess | null }>();

  constructor(private readonly users: UsersRepository) {}

  async get(userId: number): Promise<UserAccess | null> {
    const now = Date.now();
    const cached = this.entries.get(userId);
    if (cached && now - cached.loadedAt < TTL_MS) return cached.access;
    const access = await this.users.accessRow(userId);
    this.entries.delete(userId);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(userId, { loadedAt: now, access });
    return access;
  }

  /** Called by this process when it changes or deletes a user, so the change applies at once here. */
  invalidate(userId: number): void {
    this.entries.delete(userId);
  }
}
