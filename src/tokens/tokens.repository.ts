import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

export interface TokenRow {
  id: number;
  name: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

/** What a request's check needs of a token found by its hash. */
export interface TokenGrantRow {
  id: number;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

interface NewToken {
  name: string;
  scopes: readonly string[];
  tokenHash: Buffer;
  expiresAt: Date | null;
}

const COLUMNS = 'id, name, scopes, created_at, expires_at, last_used_at';

/** The only code that reads or writes `integration_tokens`. */
@Injectable()
export class TokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(token: NewToken, manager: EntityManager): Promise<TokenRow> {
    const [row] = await manager.query<TokenRow[]>(
      `INSERT INTO integration_tokens (name, scopes, token_hash, expires_at)
       VALUES ($1, $2::varchar[], $3, $4) RETURNING ${COLUMNS}`,
      [token.name, token.scopes, token.tokenHash, token.expiresAt],
    );
    return row;
  }

  /** Every token not revoked (expired ones included), oldest first. */
  listActive(): Promise<TokenRow[]> {
    return this.dataSource.query<TokenRow[]>(
      `SELECT ${COLUMNS} FROM integration_tokens WHERE revoked_at IS NULL ORDER BY id`,
    );
  }

  /** Marks the token revoked; the row as it was, or null when unknown or revoked before. */
  async revoke(id: string, manager: EntityManager): Promise<TokenRow | null> {
    const [rows] = await manager.query<[TokenRow[], number]>(
      `UPDATE integration_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL
       RETURNING ${COLUMNS}`,
      [id],
    );
    return rows[0] ?? null;
  }

  async findByHash(tokenHash: Buffer): Promise<TokenGrantRow | null> {
    const [row] = await this.dataSource.query<TokenGrantRow[]>(
      `SELECT id, scopes, expires_at, revoked_at, last_used_at FROM integration_tokens WHERE token_hash = $1`,
      [tokenHash],
    );
    return row ?? null;
  }

  /** Sets `last_used_at` to now unless another replica set it within the last minute. */
  async touch(id: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE integration_tokens SET last_used_at = now()
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id],
    );
  }
}
