// Webhooks: the routes, deliveries, URL rules, the delivery log's retention, the circuit breaker, receivers isolated, DNS.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/webhooks/, one file a part.
import { circuitBreaker } from './e2e/webhooks/circuit-breaker.js';
import { useWebhookAdmin } from './e2e/webhooks/context.js';
import { deliveryTests } from './e2e/webhooks/delivery.js';
import { TIMEOUT_MS, webhookDns } from './e2e/webhooks/dns.js';
import { receiversIsolated } from './e2e/webhooks/isolation.js';
import { deliveryLogRetention } from './e2e/webhooks/log-retention.js';
import { managementTests } from './e2e/webhooks/management.js';
import { urlRulesInProduction } from './e2e/webhooks/url-rules.js';
import { useTestApp } from './support/app.js';
import { LOOPBACK_WEBHOOKS } from './support/webhook-receiver.js';

describe('Webhooks (/api/webhooks)', () => {
  const ctx = useWebhookAdmin(useTestApp(LOOPBACK_WEBHOOKS));
  managementTests(ctx);
  deliveryTests(ctx);
});

describe('Webhook URL rules in production mode', () =>
  urlRulesInProduction(
    useTestApp({
      backgroundWorkers: true,
      webhooks: { allowHttp: false, allowPrivate: false, timeoutMs: 1000, retryScale: 0.0001 },
    }),
  ));

describe('Webhook delivery log retention with a short interactive bound', () => {
  // Every interactive statement must end within 300 ms; the prune works under the long bound, in batches.
  deliveryLogRetention(
    useTestApp({ ...LOOPBACK_WEBHOOKS, dbStatementTimeoutMs: 300, dbQueryTimeoutMs: 2000 }),
  );
});

describe('Webhook circuit breaker', () => {
  // Scaled by 0.01: the pause after 24 hours of failures is 864 s, a probe round every 15 minutes is 9 s.
  circuitBreaker(
    useTestApp({ ...LOOPBACK_WEBHOOKS, webhooks: { ...LOOPBACK_WEBHOOKS.webhooks, retryScale: 0.01 } }),
  );
});

describe('webhook receivers are isolated', () =>
  receiversIsolated(
    useTestApp({ ...LOOPBACK_WEBHOOKS, webhooks: { ...LOOPBACK_WEBHOOKS.webhooks, timeoutMs: 10_000 } }),
  ));

describe('webhook DNS', () =>
  webhookDns(
    useTestApp({ ...LOOPBACK_WEBHOOKS, webhooks: { ...LOOPBACK_WEBHOOKS.webhooks, timeoutMs: TIMEOUT_MS } }),
  ));
