import { Redis } from 'ioredis';

/**
 * The Redis the tests use: REDIS_TEST_URL, or the machine's at 127.0.0.1:6379. Undefined when none answers,
 * after saying so once; with REQUIRE_REDIS=1 (CI) a missing Redis fails the run instead of skipping tests.
 */
export async function testRedisUrl(file: string): Promise<string | undefined> {
  const url = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    await probe.ping();
    return url;
  } catch (error) {
    const message = `No Redis at ${url} (${String(error)})`;
    if (process.env.REQUIRE_REDIS === '1') throw new Error(`${message} and REQUIRE_REDIS=1`);
    process.stderr.write(
      `SKIPPED ${file}: ${message}. Start one (Debian: apt-get install redis-server) or set REDIS_TEST_URL.\n`,
    );
    return undefined;
  } finally {
    probe.disconnect();
  }
}

/** A key prefix no other test run or helper on the same Redis uses. */
export const uniqueRedisPrefix = (name: string) => `mas-test:${name}:${process.pid}:${Date.now()}:`;
