// Part of test/webhooks.e2e-spec.ts: the delivery log's retention under a short interactive bound.
import { Transactions } from '../../../src/database/transactions.js';
import { WebhookDeliverer } from '../../../src/webhooks/webhook-deliverer.js';
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';

export function deliveryLogRetention({ app, api }: UsedTestApp): void {
  it('prunes a large backlog of old attempts batch by batch, keeping the recent ones', async () => {
    const { token } = await freshAdmin(app);
    const { id } = (
      await api.post('/api/webhooks', { token, body: { url: 'http://127.0.0.1:9/a', types: ['*'] } })
    ).body.data;
    const old = 250_000;
    await app.service.app.get(Transactions).runLong(async (transaction) => {
      await transaction.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, duration_ms)
         SELECT $1, 'old-' || g, 'module.created', 1, now() - interval '40 days', 'delivered', 5
         FROM generate_series(1, $2::int) g`,
        [id, old],
      );
      await transaction.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, duration_ms)
         VALUES ($1, 'new', 'module.created', 1, now() - interval '1 day', 'delivered', 5)`,
        [id],
      );
    });
    expect(await app.service.app.get(WebhookDeliverer).prune()).toBe(old);
    const [left] = await app.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`,
      [id],
    );
    expect(left.n).toBe(1);
  });
}
