import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A long-lived token an administrator gives another system (an identity provider's SCIM client, an LMS
 * following the change feed); docs/api.md §14. Only the SHA-256 of the token is kept.
 */
@Entity({ name: 'integration_tokens' })
@Index('uq_integration_tokens_hash', ['tokenHash'], { unique: true })
export class IntegrationToken {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  /** A non-empty subset of `scim`, `events`, `exports`. */
  @Column({ type: 'varchar', length: 16, array: true })
  scopes!: string[];

  /** SHA-256 of the whole token text (`mas_…`): 32 bytes. */
  @Column({ name: 'token_hash', type: 'bytea' })
  tokenHash!: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  /** Null: never expires. */
  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3, nullable: true })
  expiresAt!: Date | null;

  /** Set on the first use, then at most once a minute. */
  @Column({ name: 'last_used_at', type: 'timestamptz', precision: 3, nullable: true })
  lastUsedAt!: Date | null;

  /** Set by DELETE /api/tokens/{id}; a revoked token is kept (the audit trail names it) but never listed. */
  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt!: Date | null;
}
