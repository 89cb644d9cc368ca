// What the parts of test/webhooks.e2e-spec.ts share: an administrator's token made afresh before each test, receivers
// closed after each, helpers that create a webhook and read its deliveries, and a percentile of timings.
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { startReceiver } from '../../support/webhook-receiver.js';

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/**
 * The area's service with an administrator's token made afresh before each test (in `given`), the receivers a
 * test started closed after it, and the helpers its parts share.
 */
export function useWebhookAdmin({ app, api }: UsedTestApp) {
  const given = {} as { token: string; receivers: Awaited<ReturnType<typeof startReceiver>>[] };
  given.receivers = [];
  beforeEach(async () => {
    ({ token: given.token } = await freshAdmin(app));
  });
  afterEach(async () => {
    await Promise.all(given.receivers.map((receiver) => receiver.close()));
    given.receivers = [];
  });

  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const started = await startReceiver(...args);
    given.receivers.push(started);
    return started;
  };
  const create = (body: unknown) => api.post('/api/webhooks', { token: given.token, body });
  const deliveries = async (id: number) =>
    (await api.get(`/api/webhooks/${id}/deliveries?per_page=100`, { token: given.token })).body.data
      .deliveries as any[];

  return { app, api, given, receiver, create, deliveries };
}

export type WebhooksContext = ReturnType<typeof useWebhookAdmin>;
