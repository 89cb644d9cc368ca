import { Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Clock } from '../core/clock.js';
import { type AuthUser } from '../core/decorators.js';
import { InvalidToken } from '../core/errors.js';
import { isTokenText, tokenHash } from './token-text.js';
import { type TokenGrantRow, TokensRepository } from './tokens.repository.js';

const MAX_ENTRIES = 10_000;
/** `last_used_at` is written at most this often per token. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The request-time check of an integration token: found by its hash, not revoked, not expired. A token's row
 * is cached for at most USER_CACHE_TTL_MS (the same 5 s bound as a user's re-check), so a revocation on another
 * replica applies within it; expiry is checked against the clock on every request.
 */
@Injectable()
export class IntegrationTokenCheck {
  private readonly logger = new Logger(IntegrationTokenCheck.name);
  /** By token text (the request's exact bytes). lru-cache holds no null: an unknown token is `{ row: null }`. */
  private readonly rows: LRUCache<string, { row: TokenGrantRow | null }> | undefined;
  /** When this process last wrote each token's `last_used_at`. */
  private readonly touched = new LRUCache<number, number>({ max: MAX_ENTRIES });
  /** Ids revoked by this process: refused at once, before their cached rows run out. */
  private readonly revoked = new LRUCache<number, true>({ max: MAX_ENTRIES });

  constructor(
    private readonly tokens: TokensRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.rows =
      config.userCacheTtlMs > 0
        ? new LRUCache({ max: MAX_ENTRIES, ttl: config.userCacheTtlMs, ttlResolution: 0, perf: clock })
        : undefined;
  }

  /**
   * The caller a token speaks for, or 401 `Invalid or expired token`. Its use is recorded by {@link used} once
   * the route's scope let it through.
   */
  async caller(text: string): Promise<AuthUser> {
    if (!isTokenText(text)) throw new InvalidToken();
    let cached = this.rows?.get(text);
    if (cached === undefined) {
      cached = { row: await this.tokens.findByHash(tokenHash(text)) };
      this.rows?.set(text, cached);
    }
    const { row } = cached;
    const now = this.clock.now();
    if (
      row === null ||
      row.revoked_at !== null ||
      this.revoked.has(Number(row.id)) ||
      (row.expires_at !== null && row.expires_at.getTime() <= now)
    ) {
      throw new InvalidToken();
    }
    return { id: 0, admin: false, integration: { tokenId: Number(row.id), scopes: row.scopes } };
  }

  /** A call the token was let through for (its scope checked): `last_used_at`, at most once a minute. */
  used(id: number): Promise<void> | undefined {
    const now = this.clock.now();
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return undefined;
    return this.touch(id, now);
  }

  /** Called by this process when it revokes a token. */
  forget(id: number): void {
    this.revoked.set(id, true);
  }

  private async touch(id: number, now: number): Promise<void> {
    this.touched.set(id, now);
    try {
      await this.tokens.touch(id);
    } catch (error) {
      // The request goes on: the use is simply not recorded this minute.
      this.touched.delete(id);
      this.logger.warn(`last_used_at of token ${id} not written: ${(error as Error).message}`);
    }
  }
}
