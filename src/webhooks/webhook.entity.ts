import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A receiver of change events (docs/webhooks.md). The secret signs every delivery and never leaves after create. */
@Entity({ name: 'webhooks' })
export class Webhook {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  /** Event types delivered; `{*}` for every type. */
  @Column({ type: 'varchar', length: 64, array: true })
  types!: string[];

  @Column({ type: 'varchar', length: 500, nullable: true })
  description!: string | null;

  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  /** `whsec_` + base64 of 24 random bytes. */
  @Column({ type: 'varchar', length: 64 })
  secret!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  /** The first failed attempt since the last delivered one; null while deliveries succeed. */
  @Column({ name: 'failing_since', type: 'timestamptz', precision: 3, nullable: true })
  failingSince!: Date | null;
}
