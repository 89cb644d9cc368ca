import { jobExpirySeconds } from './delivery-queue.js';

describe(jobExpirySeconds.name, () => {
  const bounds = { webhooks: { timeoutMs: 10_000 }, dbConnectTimeoutMs: 2500, dbQueryTimeoutMs: 6000 };

  it('covers the attempt and the record after the group before it: each a pooled connection and a statement', () => {
    // 10 s attempt + 2 × (2.5 s connection + 6 s statement) = 27 s, and a second of slack.
    expect(jobExpirySeconds(bounds)).toBe(28);
  });

  it('grows with the database bounds, so a slower database does not have its attempts sent twice', () => {
    expect(jobExpirySeconds({ ...bounds, dbQueryTimeoutMs: 31_000 })).toBe(78);
    expect(jobExpirySeconds({ ...bounds, webhooks: { timeoutMs: 100 } })).toBe(19);
  });
});
