import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One change made through the API (docs/api.md §10). Rows are only ever inserted, and pruned by age. */
@Entity({ name: 'audit_events' })
@Index('ix_audit_events_at', ['at', 'id'])
@Index('ix_audit_events_actor', ['actorId', 'at'])
@Index('ix_audit_events_action', ['action', 'at'])
// A GIN index on target_ids serves `target_id` (array containment); TypeORM cannot describe GIN, so the
// migration creates it and `synchronize: false` keeps TypeORM from dropping it.
@Index('ix_audit_events_target_ids', { synchronize: false })
export class AuditEvent {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  at!: Date;

  /** No foreign key: the trail outlives the users it names. Null for login events. */
  @Column({ name: 'actor_id', type: 'bigint', nullable: true })
  actorId!: number | null;

  @Column({ type: 'varchar', length: 64 })
  action!: string;

  @Column({ name: 'target_type', type: 'varchar', length: 32, nullable: true })
  targetType!: string | null;

  @Column({ name: 'target_ids', type: 'bigint', array: true, default: () => "'{}'" })
  targetIds!: number[];

  @Column({ type: 'jsonb', default: () => "'{}'" })
  summary!: Record<string, unknown>;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  @Column({ name: 'client_ip', type: 'varchar', length: 64, nullable: true })
  clientIp!: string | null;
}
