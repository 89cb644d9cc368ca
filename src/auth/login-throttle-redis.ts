import { createHash, randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { type Redis } from 'ioredis';
import { RedisOutage } from '../redis/redis.module.js';
import {
  addressKey,
  LOGIN_THROTTLE_RULES,
  type LoginAttempt,
  LoginThrottle,
  type ThrottledKey,
} from './login-throttle.js';

/**
 * Each counter is a sorted set of failure times (ms, by Redis's own clock so replicas agree), expiring with
 * the window. One script per call: pruning, counting and adding happen atomically on the server.
 */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2]) then
    return -1
  end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[3])
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

/**
 * For each (counter, marker) pair of keys: when the counter is at the limit and its marker does not hold the
 * window's oldest failure yet, store it and report the pair's index, so every replica reports a window once.
 */
const NEWLY_BLOCKED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS, 2 do
  local counter, marker = KEYS[i], KEYS[i + 1]
  redis.call('ZREMRANGEBYSCORE', counter, '-inf', now - window)
  if redis.call('ZCARD', counter) >= tonumber(ARGV[2]) then
    local oldest = redis.call('ZRANGE', counter, 0, 0, 'WITHSCORES')[2]
    if redis.call('GET', marker) ~= oldest then
      redis.call('SET', marker, oldest, 'PX', window)
      table.insert(out, (i + 1) / 2)
    end
  end
end
return out`;

type ThrottleCommands = Redis & {
  loginThrottleNewlyBlocked(...args: (string | number)[]): Promise<number[]>;
  loginThrottleAdmit(...args: (string | number)[]): Promise<number>;
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
    redis.defineCommand('loginThrottleAdmit', { lua: ADMIT });
    redis.defineCommand('loginThrottleBlocked', { lua: BLOCKED });
    redis.defineCommand('loginThrottleNewlyBlocked', { lua: NEWLY_BLOCKED });
    this.redis = redis as ThrottleCommands;
  }

  /** Usernames are hashed: keys stay short whatever a client sends, and Redis holds no usernames. */
  private keys(username: string | undefined, ip: string): string[] {
    const base = `${this.prefix}login-failures:`;
    const ipKey = `${base}ip:${addressKey(ip)}`;
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

  /** One script: pruning, checking both counters and reserving in both happen atomically on the server. */
  async admit(username: string, ip: string): Promise<LoginAttempt | undefined> {
    const keys = this.keys(username, ip);
    const id = randomUUID();
    const { windowMs, maxFailures } = LOGIN_THROTTLE_RULES;
    try {
      const at = await this.redis.loginThrottleAdmit(keys.length, ...keys, windowMs, maxFailures, id);
      this.outage.succeeded();
      return at < 0 ? undefined : { keys, at, id };
    } catch (error) {
      this.outage.failed(error);
      // Fails open: the attempt goes on, holding no place.
      return { keys: [], at: 0, id };
    }
  }

  async release(attempt: LoginAttempt): Promise<void> {
    if (attempt.keys.length === 0) return;
    try {
      const pipeline = this.redis.pipeline();
      for (const key of attempt.keys) pipeline.zrem(key, attempt.id);
      await pipeline.exec();
      this.outage.succeeded();
    } catch (error) {
      this.outage.failed(error);
    }
  }

  async newlyBlocked(username: string | undefined, ip: string): Promise<ThrottledKey[]> {
    const counters = this.keys(username, ip);
    const keys = counters.flatMap((key) => [key, `${key}:reported`]);
    const { windowMs, maxFailures } = LOGIN_THROTTLE_RULES;
    try {
      const indexes = await this.redis.loginThrottleNewlyBlocked(keys.length, ...keys, windowMs, maxFailures);
      this.outage.succeeded();
      return indexes.map((index) => (index === 1 ? 'address' : 'username'));
    } catch (error) {
      this.outage.failed(error);
      return [];
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
