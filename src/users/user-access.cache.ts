import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Clock } from '../core/clock.js';
import { UsersRepository } from './users.repository.js';

interface UserAccess {
  admin: boolean;
  /** Whole seconds since the epoch of the last password change: tokens with an earlier `iat` are refused. */
  passwordChangedAt: number;
}

const MAX_ENTRIES = 10_000;

/**
 * The per-request user re-check (exists and is active, admin flag, password-change time), cached for at most
 * USER_CACHE_TTL_MS (5 s by default; 0 reads the user on every request), timed by the application's
 * {@link Clock}.
 */
@Injectable()
export class UserAccessCache {
  /** lru-cache holds no null: an unknown user is remembered as `{ access: null }`. */
  private readonly entries: LRUCache<number, { access: UserAccess | null }> | undefined;

  constructor(
    private readonly users: UsersRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    clock: Clock,
  ) {
    this.entries =
      config.userCacheTtlMs > 0
        ? new LRUCache({
            max: MAX_ENTRIES,
            ttl: config.userCacheTtlMs,
            // Read the clock on every check (lru-cache would otherwise keep one reading for a millisecond).
            ttlResolution: 0,
            perf: clock,
          })
        : undefined;
  }

  async get(userId: number): Promise<UserAccess | null> {
    const cached = this.entries?.get(userId);
    if (cached !== undefined) return cached.access;
    const access = await this.users.accessRow(userId);
    this.entries?.set(userId, { access });
    return access;
  }

  /** Called by this process when it changes or deletes a user, so the change applies at once here. */
  invalidate(userId: number): void {
    this.entries?.delete(userId);
  }
}
