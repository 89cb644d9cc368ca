import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Webhook } from './webhook.entity.js';

/** One delivery attempt of one event to one webhook; kept `EVENT_RETENTION_DAYS`, removed with the webhook. */
@Entity({ name: 'webhook_deliveries' })
// One row per attempt: a job retried after a crash finds its attempt recorded and does not record it twice.
@Index('uq_webhook_deliveries_attempt', ['webhookId', 'eventId', 'attempt'], { unique: true })
@Index('ix_webhook_deliveries_webhook_at', ['webhookId', 'at', 'id'])
@Index('ix_webhook_deliveries_at', ['at'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ name: 'webhook_id', type: 'bigint' })
  webhookId!: number;

  @ManyToOne(() => Webhook, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'webhook_deliveries_webhook_id_fkey' })
  webhook?: Webhook;

  @Column({ name: 'event_id', type: 'varchar', length: 128 })
  eventId!: string;

  @Column({ name: 'event_type', type: 'varchar', length: 64 })
  eventType!: string;

  /** 1 for the first attempt. */
  @Column({ type: 'integer' })
  attempt!: number;

  /** When the attempt started. */
  @Column({ type: 'timestamptz', precision: 3 })
  at!: Date;

  /** `delivered`, `retrying` (a later attempt is scheduled) or `failed` (given up). */
  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  /** Why no 2xx came (timeout, connection refused, URL not allowed…); null with a status code. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  error!: string | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  /** The start of the receiver's answer, at most 200 characters; never more is read or kept. */
  @Column({ name: 'response_excerpt', type: 'varchar', length: 200, nullable: true })
  responseExcerpt!: string | null;

  @Column({ name: 'next_retry_at', type: 'timestamptz', precision: 3, nullable: true })
  nextRetryAt!: Date | null;
}
