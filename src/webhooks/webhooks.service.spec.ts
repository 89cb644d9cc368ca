import { DataSource } from 'typeorm';
import { type Transaction } from '../database/transactions.js';
import { CONTEXT, DEFAULT_CONFIG, FakeAudit, FakeTransactions, NO_DATABASE } from '../testing/fakes.js';
import { DeliveryQueue, type DeliveryJob } from './delivery-queue.js';
import { TEST_EVENT_TYPE } from './webhook-types.js';
import { HostResolver, type CheckedUrl, WebhookUrlRules } from './webhook-url.js';
import { NothingToUpdate, WebhookNotFound, WebhookUrlNotAllowed } from './webhook.errors.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { type WebhookChanges, type WebhookRow, WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

// The unit tier's one fake style: src/testing/fakes.ts.
const AT = new Date('2026-11-21T08:41:00.123Z');

/** Webhooks in memory, by id. */
class FakeWebhooks extends WebhooksRepository {
  readonly rows = new Map<string, WebhookRow>();
  private nextId = 1;

  constructor() {
    super(NO_DATABASE);
  }

  override insert(webhook: Parameters<WebhooksRepository['insert']>[0]): Promise<WebhookRow> {
    const row: WebhookRow = {
      id: this.nextId++,
      url: webhook.url,
      types: [...webhook.types],
      description: webhook.description,
      enabled: true,
      secret: webhook.secret,
      created_at: AT,
      updated_at: AT,
      failing_since: null,
    };
    this.rows.set(String(row.id), row);
    return Promise.resolve(row);
  }

  override findById(id: string): Promise<WebhookRow | null> {
    return Promise.resolve(this.rows.get(id) ?? null);
  }

  override lockById(id: string): Promise<WebhookRow | null> {
    return this.findById(id);
  }

  override update(id: string, changes: WebhookChanges): Promise<WebhookRow | null> {
    const row = this.rows.get(id);
    if (!row) return Promise.resolve(null);
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const updated = { ...row, ...defined };
    this.rows.set(id, updated);
    return Promise.resolve(updated);
  }

  override delete(id: string): Promise<WebhookRow | null> {
    const row = this.rows.get(id) ?? null;
    this.rows.delete(id);
    return Promise.resolve(row);
  }
}

/** Allows every URL but those it was told to refuse, and records what it checked. */
class FakeUrlRules extends WebhookUrlRules {
  readonly checked: string[] = [];
  readonly refused = new Set<string>();

  constructor() {
    super(DEFAULT_CONFIG, new HostResolver());
  }

  override check(text: string): Promise<CheckedUrl> {
    this.checked.push(text);
    if (this.refused.has(text)) return Promise.reject(new WebhookUrlNotAllowed());
    const url = new URL(text);
    return Promise.resolve({ url, host: url.hostname, address: { address: '192.0.2.1', family: 4 } });
  }
}

/** Records the jobs enqueued, with their transaction, and the wake-ups. */
class FakeQueue extends DeliveryQueue {
  readonly enqueued: { jobs: readonly DeliveryJob[]; transaction: Transaction }[] = [];
  wakeUps = 0;

  constructor() {
    super(DEFAULT_CONFIG, new DataSource({ type: 'postgres', url: 'postgres://unused@127.0.0.1:1/unused' }));
  }

  override enqueue(
    jobs: readonly DeliveryJob[],
    _startAfter: Date | null,
    transaction: Transaction,
  ): Promise<void> {
    this.enqueued.push({ jobs, transaction });
    return Promise.resolve();
  }

  override wake(): void {
    this.wakeUps++;
  }
}

function setUp() {
  const webhooks = new FakeWebhooks();
  const rules = new FakeUrlRules();
  const queue = new FakeQueue();
  const transactions = new FakeTransactions();
  const audit = new FakeAudit();
  const service = new WebhooksService(
    webhooks,
    new WebhookDeliveriesRepository(NO_DATABASE),
    rules,
    queue,
    transactions,
    audit,
  );
  return { webhooks, rules, queue, transactions, audit, service };
}

describe('WebhooksService', () => {
  it('creates a webhook with a new secret, answered once, and audits it without the secret', async () => {
    const { service, rules, audit, transactions } = setUp();
    const created = await service.create(
      { url: 'https://hooks.example.edu/in', types: ['module.created', 'module.created'] },
      CONTEXT,
    );
    expect(rules.checked).toEqual(['https://hooks.example.edu/in']);
    expect(created).toMatchObject({ id: 1, types: ['module.created'], description: null, enabled: true });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(audit.entries).toEqual([
      {
        transaction: transactions.marker,
        context: CONTEXT,
        entry: {
          action: 'webhook.create',
          targetType: 'webhook',
          targetIds: [1],
          summary: { url: 'https://hooks.example.edu/in', types: ['module.created'], enabled: true },
        },
      },
    ]);
    expect(JSON.stringify(audit.entries.map(({ entry }) => entry))).not.toContain(created.secret);
  });

  it('subscribes to everything when the types include *', async () => {
    const { service } = setUp();
    const created = await service.create(
      { url: 'https://a.example.edu/', types: ['user.created', '*'] },
      CONTEXT,
    );
    expect(created.types).toEqual(['*']);
  });

  it('creates nothing when the URL is refused', async () => {
    const { service, rules, webhooks, transactions, audit } = setUp();
    rules.refused.add('https://internal.example.edu/');
    await expect(
      service.create({ url: 'https://internal.example.edu/', types: ['*'] }, CONTEXT),
    ).rejects.toThrow(WebhookUrlNotAllowed);
    expect([webhooks.rows.size, transactions.opened, audit.entries.length]).toEqual([0, 0, 0]);
  });

  describe('update', () => {
    it('audits only the fields whose value changed, as from and to', async () => {
      const { service, audit } = setUp();
      const { id } = await service.create({ url: 'https://a.example.edu/', types: ['*'] }, CONTEXT);
      audit.entries.length = 0;
      const updated = await service.update(
        String(id),
        { url: 'https://a.example.edu/', types: ['user.created'], enabled: false },
        CONTEXT,
      );
      expect(updated).toMatchObject({ types: ['user.created'], enabled: false });
      expect(audit.entries.map(({ entry }) => entry)).toEqual([
        {
          action: 'webhook.update',
          targetType: 'webhook',
          targetIds: [String(id)],
          summary: { types: { from: ['*'], to: ['user.created'] }, enabled: { from: true, to: false } },
        },
      ]);
    });

    it('checks a new URL before anything is written', async () => {
      const { service, rules, transactions } = setUp();
      const { id } = await service.create({ url: 'https://a.example.edu/', types: ['*'] }, CONTEXT);
      rules.refused.add('https://b.example.edu/');
      const opened = transactions.opened;
      await expect(service.update(String(id), { url: 'https://b.example.edu/' }, CONTEXT)).rejects.toThrow(
        WebhookUrlNotAllowed,
      );
      expect(transactions.opened).toBe(opened);
    });

    it('refuses an update with no field, and answers not found for an unknown id', async () => {
      const { service } = setUp();
      await expect(service.update('1', {}, CONTEXT)).rejects.toThrow(NothingToUpdate);
      await expect(service.update('7', { enabled: false }, CONTEXT)).rejects.toThrow(WebhookNotFound);
    });
  });

  it('deletes a webhook and audits what it was; an unknown id is not found', async () => {
    const { service, webhooks, audit } = setUp();
    const { id, secret } = await service.create({ url: 'https://a.example.edu/', types: ['*'] }, CONTEXT);
    await service.remove(String(id), CONTEXT);
    expect(webhooks.rows.size).toBe(0);
    expect(audit.entries.at(-1)?.entry).toEqual({
      action: 'webhook.delete',
      targetType: 'webhook',
      targetIds: [String(id)],
      summary: { url: 'https://a.example.edu/', types: ['*'], enabled: true },
    });
    expect(JSON.stringify(audit.entries.map(({ entry }) => entry))).not.toContain(secret);
    await expect(service.remove(String(id), CONTEXT)).rejects.toThrow(WebhookNotFound);
  });

  it('queues one test event for the webhook alone, in a transaction, then wakes the workers', async () => {
    const { service, queue, transactions } = setUp();
    const { id } = await service.create({ url: 'https://a.example.edu/', types: ['user.created'] }, CONTEXT);
    const answer = await service.sendTest(String(id));
    expect(answer).toEqual({ event_id: expect.stringMatching(/^test_[0-9a-f]{32}$/), type: TEST_EVENT_TYPE });
    expect(queue.enqueued).toHaveLength(1);
    const [{ jobs, transaction }] = queue.enqueued;
    expect(transaction).toBe(transactions.marker);
    expect(jobs).toEqual([
      {
        webhookId: String(id),
        event: { id: answer.event_id, type: TEST_EVENT_TYPE, at: jobs[0].firstAt, data: { webhook_id: id } },
        attempt: 1,
        firstAt: expect.any(String),
      },
    ]);
    expect(queue.wakeUps).toBe(1);
    await expect(service.sendTest('99')).rejects.toThrow(WebhookNotFound);
    expect(queue.enqueued).toHaveLength(1);
  });
});
