// Plain JavaScript so that the node:test scale test (test/scale/) shares it with the Jest tests; types in redis.d.ts.
import process from 'node:process';
import { Redis } from 'ioredis';

/**
 * The Redis the tests use: REDIS_TEST_URL, or the machine's at 127.0.0.1:6379, and `missing`, why it does not
 * answer (undefined when it does). With REQUIRE_REDIS=1 (CI) a missing Redis throws instead.
 */
export async function probeTestRedis() {
  const url = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    await probe.ping();
    return { url, missing: undefined };
  } catch (error) {
    const missing = `No Redis at ${url} (${String(error)})`;
    if (process.env.REQUIRE_REDIS === '1') throw new Error(`${missing} and REQUIRE_REDIS=1`);
    return { url, missing };
  } finally {
    probe.disconnect();
  }
}

/** A key prefix no other test run or helper on the same Redis uses. */
export const uniqueRedisPrefix = (name) => `mas-test:${name}:${process.pid}:${Date.now()}:`;
