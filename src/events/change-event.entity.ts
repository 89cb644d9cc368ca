import { Check, Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One change to a module or a user (docs/events.md), written in the change's transaction. Rows are only ever
 * inserted, and pruned by age as a prefix of the feed order.
 */
@Entity({ name: 'change_events' })
@Index('ix_change_events_position', ['txid', 'id'])
@Index('ix_change_events_type_position', ['type', 'txid', 'id'])
export class ChangeEvent {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  /**
   * The writing transaction's id, `pg_current_xact_id()` (xid8: 64 bits with the epoch, never wraps), as a bigint
   * by the migration's `change_event_txid()`, because TypeORM's schema builder has no xid8 type (the value fits
   * a bigint for 2^31 epochs of 2^32 transactions).
   */
  @Column({ type: 'bigint', default: () => 'change_event_txid()' })
  txid!: number;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  at!: Date;

  @Column({ type: 'jsonb' })
  data!: unknown;
}

/** The feed position up to which retention has deleted events (one row, absent until the first prune). */
@Entity({ name: 'change_events_pruned' })
@Check('change_events_pruned_singleton_check', 'singleton')
export class ChangeEventsPruned {
  @PrimaryColumn({ type: 'boolean', default: true })
  singleton!: boolean;

  @Column({ type: 'bigint' })
  txid!: number;

  @Column({ type: 'bigint' })
  id!: number;
}
