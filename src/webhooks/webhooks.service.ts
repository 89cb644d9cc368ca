import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { type Precondition } from '../core/preconditions.js';
import { type Paging } from '../core/query.js';
import { Transactions } from '../database/transactions.js';
import { DeliveryQueue } from './delivery-queue.js';
import { type CreateWebhookDto } from './dto/create-webhook.dto.js';
import { type UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { auditView, urlForAudit } from './webhook-audit.js';
import { normaliseTypes } from './webhook-body-rules.js';
import { TEST_EVENT_TYPE } from './webhook-types.js';
import { WebhookUrlRules } from './webhook-url.js';
import { NothingToUpdate, WebhookNotFound } from './webhook.errors.js';
import { type DeliveryResponse } from './delivery.shape.js';
import { toDeliveryResponse, toWebhookResponse } from './webhook.mapper.js';
import { type WebhookResponse } from './webhook.shape.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { type WebhookChanges, type WebhookRow, WebhooksRepository } from './webhooks.repository.js';

export interface WebhookPage {
  webhooks: WebhookResponse[];
  page: number;
  per_page: number;
  total: number;
}

export interface DeliveryPage {
  deliveries: DeliveryResponse[];
  page: number;
  per_page: number;
  total: number;
}

/** `whsec_` + base64 of 24 random bytes (the Standard Webhooks secret format). */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** Webhook management (docs/api.md §12). Deliveries happen elsewhere (WebhookDeliverer), never here. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveryLog: WebhookDeliveriesRepository,
    private readonly rules: WebhookUrlRules,
    private readonly queue: DeliveryQueue,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  async create(
    dto: CreateWebhookDto,
    context: RequestContext,
  ): Promise<WebhookResponse & { secret: string }> {
    await this.rules.check(dto.url);
    const secret = newSecret();
    const row = await this.transactions.run(async (transaction) => {
      const created = await this.webhooks.insert(
        { url: dto.url, types: normaliseTypes(dto.types), description: dto.description ?? null, secret },
        transaction,
      );
      await this.audit.record(transaction, context, {
        action: 'webhook.create',
        targetType: 'webhook',
        targetIds: [created.id],
        summary: auditView(created),
      });
      return created;
    });
    return { ...toWebhookResponse(row), secret };
  }

  async list(paging: Paging): Promise<WebhookPage> {
    const { items, total } = await this.webhooks.page(paging);
    return { webhooks: items.map(toWebhookResponse), page: paging.page, per_page: paging.perPage, total };
  }

  async get(id: string): Promise<WebhookResponse> {
    return toWebhookResponse(await this.existing(id));
  }

  async update(
    id: string,
    dto: UpdateWebhookDto,
    context: RequestContext,
    precondition?: Precondition,
  ): Promise<WebhookResponse> {
    const { url, types, description, enabled } = dto;
    if (url === undefined && types === undefined && description === undefined && enabled === undefined)
      throw new NothingToUpdate();
    await this.existing(id);
    if (url !== undefined) await this.rules.check(url);
    const changes: WebhookChanges = {
      url,
      types: types === undefined ? undefined : normaliseTypes(types),
      description,
      enabled,
    };
    const updated = await this.transactions.run(async (transaction) => {
      // Locked and read in the write's transaction: If-Match compares what the write changes (docs/api.md §17).
      const before = await this.webhooks.lockById(id, transaction);
      if (!before) return null;
      precondition?.(toWebhookResponse(before));
      const row = await this.webhooks.update(id, changes, transaction);
      if (!row) return null;
      const summary: Record<string, unknown> = {};
      for (const field of ['url', 'types', 'description', 'enabled'] as const) {
        if (changes[field] === undefined || JSON.stringify(before[field]) === JSON.stringify(row[field]))
          continue;
        // The URL without its query string: a receiver's token there is not kept for a year.
        summary[field] =
          field === 'url'
            ? { from: urlForAudit(before.url), to: urlForAudit(row.url) }
            : { from: before[field], to: row[field] };
      }
      await this.audit.record(transaction, context, {
        action: 'webhook.update',
        targetType: 'webhook',
        targetIds: [id],
        summary,
      });
      return row;
    });
    if (!updated) throw new WebhookNotFound();
    return toWebhookResponse(updated);
  }

  /** Deletes the webhook with its delivery log; its pending attempts are dropped by the workers. */
  async remove(id: string, context: RequestContext, precondition?: Precondition): Promise<void> {
    await this.transactions.run(async (transaction) => {
      const current = await this.webhooks.lockById(id, transaction);
      if (!current) throw new WebhookNotFound();
      precondition?.(toWebhookResponse(current));
      const deleted = await this.webhooks.delete(id, transaction);
      if (!deleted) throw new WebhookNotFound();
      await this.audit.record(transaction, context, {
        action: 'webhook.delete',
        targetType: 'webhook',
        targetIds: [id],
        summary: auditView(deleted),
      });
    });
  }

  /** Queues a `webhook.test` event for this webhook alone; a worker delivers it like any other. */
  async sendTest(id: string): Promise<{ event_id: string; type: string }> {
    const webhook = await this.existing(id);
    const now = new Date().toISOString();
    const eventId = `test_${randomUUID().replaceAll('-', '')}`;
    await this.transactions.run((transaction) =>
      this.queue.enqueue(
        [
          {
            webhookId: id,
            event: { id: eventId, type: TEST_EVENT_TYPE, at: now, data: { webhook_id: Number(webhook.id) } },
            attempt: 1,
            firstAt: now,
          },
        ],
        null,
        transaction,
      ),
    );
    this.queue.wake();
    return { event_id: eventId, type: TEST_EVENT_TYPE };
  }

  async deliveries(id: string, paging: Paging): Promise<DeliveryPage> {
    await this.existing(id);
    const { items, total } = await this.deliveryLog.deliveries(id, paging);
    return {
      deliveries: items.map(toDeliveryResponse),
      page: paging.page,
      per_page: paging.perPage,
      total,
    };
  }

  private async existing(id: string): Promise<WebhookRow> {
    const row = await this.webhooks.findById(id);
    if (!row) throw new WebhookNotFound();
    return row;
  }
}
