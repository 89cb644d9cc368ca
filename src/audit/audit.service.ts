import { Inject, Injectable } from '@nestjs/common';
import { retentionCutoff } from '../database/retention.js';
import { type Transaction } from '../database/transactions.js';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { type AuditEntry, type RequestContext } from './audit-actions.js';
import { type AuditEventResponse } from './audit-event.shape.js';
import { toAuditEventResponse } from './audit.mapper.js';
import { type AuditFilter, AuditRepository } from './audit.repository.js';

export interface AuditPage {
  events: AuditEventResponse[];
  page: number;
  per_page: number;
  total: number;
}

/**
 * Records changes in the caller's transaction, lists them, and prunes them after the retention period (the
 * daily prune runs in src/workers/).
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly events: AuditRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Writes one event. Pass the transaction's `manager` so the event commits or rolls back with the change;
   * without one (login events) it is written on its own.
   */
  record(manager: Transaction | undefined, context: RequestContext, entry: AuditEntry): Promise<void> {
    return this.events.append(
      {
        actorId: context.actorId,
        action: entry.action,
        targetType: entry.targetType,
        targetIds: entry.targetIds.map(String),
        summary: entry.summary ?? {},
        requestId: context.requestId,
        clientIp: context.clientIp,
      },
      manager,
    );
  }

  async list(filter: AuditFilter): Promise<AuditPage> {
    const { events, total } = await this.events.page(filter);
    return {
      events: events.map(toAuditEventResponse),
      page: filter.paging.page,
      per_page: filter.paging.perPage,
      total,
    };
  }

  /** Deletes events older than the retention period; 0 days keeps everything. */
  async prune(now = new Date()): Promise<number> {
    const days = this.config.auditRetentionDays;
    if (days === 0) return 0;
    return this.events.pruneBefore(retentionCutoff(now, days));
  }
}
