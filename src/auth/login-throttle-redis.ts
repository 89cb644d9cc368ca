import { createHash, randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { type Redis } from 'ioredis';
import { RedisOutage } from '../redis/redis.module.js';
import { LOGIN_THROTTLE_RULES, LoginThrottle } from './login-throttle.js';

/**
 * Each counter is a sorted set of failure times (ms, by Redis's own clock so replicas agree), expiring with
 * the window. One script per call: pruning, counting and adding happen atomically on the server.
 */
const RECORD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('PEXPIRE', key, window)
end
return now`;

const BLOCKED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  if redis.call('ZCOUNT', key, '(' .. (now - tonumber(ARGV[1])), '+inf') >= tonumber(ARGV[2]) then
    return 1
  end
end
return 0`;

type ThrottleCommands = Redis & {
  loginThrottleRecord(...args: (string | number)[]): Promise<number>;
  loginThrottleBlocked(...args: (string | number)[]): Promise<number>;
};

/**
 * The counters shared by every replica (REDIS_URL). When Redis cannot be reached the throttle fails open:
 * logins go on unthrottled rather than being refused, and the outage is logged once.
 */
export class RedisLoginThrottle extends LoginThrottle {
  private readonly redis: ThrottleCommands;
  private readonly outage = new RedisOutage(new Logger('LoginThrottle'));

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    super();
    redis.defineCommand('loginThrottleRecord', { lua: RECORD });
    redis.defineCommand('loginThrottleBlocked', { lua: BLOCKED });
    this.redis = redis as ThrottleCommands;
  }

  /** Usernames are hashed: keys stay short whatever a client sends, and Redis holds no usernames. */
  private keys(username: string | undefined, ip: string): string[] {
    const base = `${this.prefix}login-failures:`;
    const ipKey = `${base}ip:${ip}`;
    if (username === undefined) return [ipKey];
    const user = createHash('sha256').update(username.toLowerCase()).digest('base64url');
    return [ipKey, `${base}user:${user}`];
  }

  async isBlocked(username: string | undefined, ip: string): Promise<boolean> {
    const keys = this.keys(username, ip);
    const { windowMs, maxFailures } = LOGIN_THROTTLE_RULES;
    try {
      const blocked = await this.redis.loginThrottleBlocked(keys.length, ...keys, windowMs, maxFailures);
      this.outage.succeeded();
      return blocked === 1;
    } catch (error) {
      this.outage.failed(error);
      return false;
    }
  }

  async recordFailure(username: string, ip: string): Promise<void> {
    const keys = this.keys(username, ip);
    try {
      await this.redis.loginThrottleRecord(keys.length, ...keys, LOGIN_THROTTLE_RULES.windowMs, randomUUID());
      this.outage.succeeded();
    } catch (error) {
      this.outage.failed(error);
    }
  }

  /** Deletes this service's counters (its key prefix only). */
  async reset(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(
        cursor,
        'MATCH',
        `${this.prefix}login-failures:*`,
        'COUNT',
        500,
      );
      if (keys.length > 0) await this.redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}
