import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * How far the dispatcher has followed the change feed: one row, locked by the replica that dispatches, so two
 * replicas never enqueue the same event twice (docs/webhooks.md).
 */
@Entity({ name: 'webhook_dispatch' })
@Check('webhook_dispatch_singleton_check', 'singleton')
export class WebhookDispatch {
  /** Always true: the table holds one row, inserted by its migration. */
  @PrimaryColumn({ type: 'boolean', default: true })
  singleton!: boolean;

  /** The feed position of the last event dispatched (its transaction id and event id); null before the first. */
  @Column({ name: 'last_txid', type: 'bigint', nullable: true })
  lastTxid!: number | null;

  @Column({ name: 'last_event_id', type: 'bigint', nullable: true })
  lastEventId!: number | null;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt!: Date;
}
