import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A POST's `Idempotency-Key`, per caller (docs/api.md §17): claimed when the request starts, completed with its
 * 2xx answer, deleted when it answers anything else; kept 24 hours, on every replica alike.
 */
@Entity({ name: 'idempotency_keys' })
@Index('ix_idempotency_keys_created_at', ['createdAt'])
export class IdempotencyKey {
  /** `user:<id>` or `token:<id>` (an integration token). */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  caller!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key!: string;

  /** SHA-256 of the method, path, query and body (JSON as a value). */
  @Column({ type: 'bytea' })
  fingerprint!: Buffer;

  /** Null while the first request runs. */
  @Column({ type: 'smallint', nullable: true })
  status!: number | null;

  /** The answer to replay, its secrets nulled; null while the first request runs. */
  @Column({ type: 'text', nullable: true })
  body!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;
}
