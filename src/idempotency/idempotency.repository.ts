import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/** How long a key is remembered (docs/api.md §17). */
export const IDEMPOTENCY_HOURS = 24;

/** A key already held by an earlier request of the caller. */
export interface HeldKey {
  fingerprint: Buffer;
  /** Null while that request runs. */
  status: number | null;
  body: string | null;
}

/** The only code that reads or writes `idempotency_keys`. */
@Injectable()
export class IdempotencyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Claims `key` for a request: true when this request now holds it (no row, or one past the 24 hours, which is
   * taken over); false when a live row holds it.
   */
  async claim(caller: string, key: string, fingerprint: Buffer): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `INSERT INTO idempotency_keys AS k (caller, key, fingerprint) VALUES ($1, $2, $3)
       ON CONFLICT (caller, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, status = NULL, body = NULL, created_at = now()
         WHERE k.created_at < now() - make_interval(hours => ${IDEMPOTENCY_HOURS})
       RETURNING 1`,
      [caller, key, fingerprint],
    );
    return rows.length === 1;
  }

  /** The live row holding `key`, if any (it may have been released since the claim failed). */
  async held(caller: string, key: string): Promise<HeldKey | undefined> {
    const [row] = await this.dataSource.query<HeldKey[]>(
      `SELECT fingerprint, status, body FROM idempotency_keys
       WHERE caller = $1 AND key = $2 AND created_at >= now() - make_interval(hours => ${IDEMPOTENCY_HOURS})`,
      [caller, key],
    );
    return row;
  }

  /** Remembers the 2xx answer of the request that holds `key`. */
  async complete(caller: string, key: string, status: number, body: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET status = $3, body = $4 WHERE caller = $1 AND key = $2 AND status IS NULL`,
      [caller, key, status, body],
    );
  }

  /** Forgets a claim whose request did not answer 2xx, so the key can be used again. */
  async release(caller: string, key: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_keys WHERE caller = $1 AND key = $2 AND status IS NULL`,
      [caller, key],
    );
  }

  /** Deletes at most `size` keys created before `cutoff`; returns how many it deleted. */
  async pruneBefore(cutoff: Date, size: number, manager: EntityManager): Promise<number> {
    const [, deleted] = await manager.query<[unknown, number]>(
      `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT $2))`,
      [cutoff, size],
    );
    return deleted;
  }
}
