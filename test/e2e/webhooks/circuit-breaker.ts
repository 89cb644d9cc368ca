// Part of test/webhooks.e2e-spec.ts: the circuit breaker.
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { waitFor } from '../../support/wait-for.js';
import { eventually, startReceiver } from '../../support/webhook-receiver.js';

export function circuitBreaker({ app, api }: UsedTestApp): void {
  it('holds a webhook failing for 24 hours until its next probe round, and a delivered probe ends the pause', async () => {
    const { token } = await freshAdmin(app);
    const pausedTarget = await startReceiver();
    const failingTarget = await startReceiver();
    try {
      const paused = (
        await api.post('/api/webhooks', { token, body: { url: pausedTarget.url, types: ['*'] } })
      ).body.data;
      await api.post('/api/webhooks', { token, body: { url: failingTarget.url, types: ['*'] } });
      // One failing for a (scaled) day and a half, its last attempt just now; the other for a minute only.
      await app.dataSource.query(
        `UPDATE webhooks SET failing_since = now() - CASE WHEN id = $1 THEN interval '1300 seconds'
                                                          ELSE interval '60 seconds' END`,
        [paused.id],
      );
      await app.dataSource.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, status_code, duration_ms)
         VALUES ($1, 'earlier', 'module.created', 1, now(), 'retrying', 500, 5)`,
        [paused.id],
      );
      const user = await api.post('/api/users', {
        token,
        body: { username: 'breaker.case', email: 'breaker@example.edu', password: 'a-long-password-1' },
      });
      expect(user.status).toBe(201);
      // The webhook failing for a minute only is not paused: it gets the event at once.
      await failingTarget.waitFor((got) => got.length === 1);
      // The paused one's job waits for the probe round (put back, not sent, not recorded)...
      const [held] = await waitFor(
        () =>
          app.dataSource
            .query<{ start_after: Date }[]>(
              `SELECT start_after FROM pgboss.job WHERE name = 'webhook-delivery' AND state = 'created'
               AND data->>'webhookId' = $1`,
              [String(paused.id)],
            )
            .then((rows) => (rows.length === 1 ? rows : undefined)),
        { what: "the paused webhook's job put back" },
      );
      expect(held.start_after.getTime()).toBeGreaterThan(Date.now() + 5000);
      expect(pausedTarget.received).toHaveLength(0);
      expect((await api.get(`/api/webhooks/${paused.id}/deliveries`, { token })).body.data.total).toBe(1);
      // ...and is sent then; delivered, it ends the pause.
      await pausedTarget.waitFor((got) => got.length === 1, 20_000);
      const after = await eventually(async () => {
        const res = await api.get(`/api/webhooks/${paused.id}`, { token });
        return res.body.data.failing_since === null ? res.body.data : undefined;
      });
      expect(after.enabled).toBe(true);
    } finally {
      await pausedTarget.close();
      await failingTarget.close();
    }
  });
}
