import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { type Paging } from '../core/query.js';
import { pageWithTotal, type PageRow, SqlParams, splitPage, whereClause } from '../database/sql.js';
import { type DeferredRows, writeRows } from '../database/transactions.js';
import { type AuditAction, type AuditTargetType } from './audit-actions.js';
import { AUDIT_EVENT_FIELDS, type AuditEventResponse } from './audit-event.shape.js';

/** A row to append; `at` is the database's clock (the change's transaction time). */
interface NewAuditEvent {
  actorId: number | null;
  action: AuditAction;
  targetType: AuditTargetType | null;
  targetIds: readonly string[];
  summary: Record<string, unknown>;
  requestId: string | null;
  clientIp: string | null;
}

export interface AuditFilter {
  actorId?: string;
  actions?: readonly AuditAction[];
  targetType?: AuditTargetType;
  targetId?: string;
  from?: Date;
  to?: Date;
  /** `at` (and then `id`) ascending instead of the default newest first. */
  ascending: boolean;
  paging: Paging;
}

/** An event as read: the wire fields (audit-event.shape.ts), `at` still a Date. */
export type AuditEventRow = Omit<AuditEventResponse, 'at'> & { at: Date };

/** Audit rows as one INSERT, in their order; inside a transaction of Transactions, written at its end. */
const AUDIT_ROWS: DeferredRows<NewAuditEvent> = {
  statement: (events, params) =>
    `INSERT INTO audit_events (actor_id, action, target_type, target_ids, summary, request_id, client_ip)
     VALUES ${events
       .map(
         (event) =>
           `(${params.add(event.actorId)}::bigint, ${params.add(event.action)}, ${params.add(event.targetType)}, ` +
           `${params.add(event.targetIds)}::bigint[], ${params.add(JSON.stringify(event.summary))}::jsonb, ` +
           `${params.add(event.requestId)}, ${params.add(event.clientIp)})`,
       )
       .join(', ')}`,
};

/** The columns of an `AuditEventRow`: each wire field from its column. */
const COLUMNS = AUDIT_EVENT_FIELDS.map((field) => `e.${field}`).join(', ');

/** The only code that reads or writes `audit_events`. */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Appends the event in `manager`'s transaction, so it commits or rolls back with the change it records. In a
   * transaction Transactions opened, it is only queued here and written at the transaction's end, with the
   * other rows left there (`writeRows`); otherwise it is written at once.
   */
  append(event: NewAuditEvent, manager: EntityManager = this.dataSource.manager): Promise<void> {
    return writeRows(manager, AUDIT_ROWS, event);
  }

  /** One page and the total in one statement: one row per event, or a single row of nulls when the page is empty. */
  async page(filter: AuditFilter): Promise<{ events: AuditEventRow[]; total: number }> {
    const params = new SqlParams();
    const conditions: string[] = [];
    if (filter.actorId !== undefined) conditions.push(`e.actor_id = ${params.add(filter.actorId)}`);
    if (filter.actions !== undefined)
      conditions.push(`e.action = ANY(${params.add(filter.actions)}::text[])`);
    if (filter.targetType !== undefined) conditions.push(`e.target_type = ${params.add(filter.targetType)}`);
    if (filter.targetId !== undefined)
      conditions.push(`e.target_ids @> ARRAY[${params.add(filter.targetId)}::bigint]`);
    if (filter.from !== undefined) conditions.push(`e.at >= ${params.add(filter.from)}`);
    if (filter.to !== undefined) conditions.push(`e.at <= ${params.add(filter.to)}`);
    const direction = filter.ascending ? 'ASC' : 'DESC';
    const sql = pageWithTotal(
      params,
      'FROM audit_events e',
      whereClause(conditions),
      COLUMNS,
      `e.at ${direction}, e.id ${direction}`,
      filter.paging,
    );
    const { items, total } = splitPage(
      await this.dataSource.query<PageRow<AuditEventRow>[]>(sql, params.values),
    );
    return { events: items, total };
  }

  /** Deletes events older than `cutoff`; returns how many. */
  async pruneBefore(cutoff: Date): Promise<number> {
    const [, deleted] = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM audit_events WHERE at < $1`,
      [cutoff],
    );
    return deleted;
  }
}
