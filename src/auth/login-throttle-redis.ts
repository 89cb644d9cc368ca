import { createHash, randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { type Redis } from 'ioredis';
import { RedisOutage } from '../redis/redis.module.js';
import {
  addressKey,
  LOGIN_THROTTLE_RULES,
  type LoginAttempt,
  LoginThrottle,
  type NotAdmitted,
  type ThrottledKey,
  usernameKey,
} from './login-throttle.js';

/** The start of every script: `now`, the time by Redis's own clock in ms, so that every replica agrees. */
const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Each counter is a sorted set of failure times (ms, by Redis's own clock so replicas agree) beside a sorted set
 * of the attempts in flight (`…:pending`, by admission time), both expiring with the window. One script per call:
 * pruning, counting and adding happen atomically on the server. KEYS come in pairs (failures, pending).
 * Answers the admission time, -1 (throttled: 10 failures) or -2 (busy: failures and attempts in flight fill it).
 */
const ADMIT = `
${NOW_MS}local window = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local busy = false
for i = 1, #KEYS, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  redis.call('ZREMRANGEBYSCORE', KEYS[i + 1], '-inf', now - window)
  local failed = redis.call('ZCARD', KEYS[i])
  if failed >= max then
    return -1
  end
  if failed + redis.call('ZCARD', KEYS[i + 1]) >= max then
    busy = true
  end
end
if busy then
  return -2
end
for i = 1, #KEYS, 2 do
  redis.call('ZADD', KEYS[i + 1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[i + 1], window)
end
return now`;

/** The attempt failed: in each pair, its place in flight becomes a failure (now). */
const FAIL = `
${NOW_MS}local window = tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  if redis.call('ZREM', KEYS[i + 1], ARGV[2]) == 1 then
    redis.call('ZADD', KEYS[i], now, ARGV[2])
    redis.call('PEXPIRE', KEYS[i], window)
  end
end
return 0`;

const BLOCKED = `
${NOW_MS}for i, key in ipairs(KEYS) do
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
${NOW_MS}local window = tonumber(ARGV[1])
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
  loginThrottleFail(...args: (string | number)[]): Promise<number>;
  loginThrottleBlocked(...args: (string | number)[]): Promise<number>;
};

/**
 * The counters shared by every replica (REDIS_URL). When Redis cannot be reached the throttle fails open:
 * logins go on unthrottled rather than being refused, and the outage is logged once.
 *
 * Every key carries the hash tag `{login-failures}`, so the keys one script touches (an address's and a
 * username's counters) are in one slot: a Redis in cluster mode (or a proxy in front of one) refuses a script
 * over keys of several slots (CROSSSLOT), which would make the throttle fail open for good.
 */
export class RedisLoginThrottle extends LoginThrottle {
  /** Attempts of other replicas end unseen here: a waiting attempt asks again this often. */
  protected readonly pollMs = 50;
  private readonly redis: ThrottleCommands;
  private readonly outage = new RedisOutage(new Logger('LoginThrottle'));

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    super();
    redis.defineCommand('loginThrottleAdmit', { lua: ADMIT });
    redis.defineCommand('loginThrottleFail', { lua: FAIL });
    redis.defineCommand('loginThrottleBlocked', { lua: BLOCKED });
    redis.defineCommand('loginThrottleNewlyBlocked', { lua: NEWLY_BLOCKED });
    this.redis = redis as ThrottleCommands;
  }

  /** The prefix of every key: the service's own, then the hash tag that puts all of them in one slot. */
  private get base(): string {
    return `${this.prefix}{login-failures}:`;
  }

  /** Usernames are hashed: keys stay short whatever a client sends, and Redis holds no usernames. */
  private keys(username: string | undefined, ip: string): string[] {
    const ipKey = `${this.base}ip:${addressKey(ip)}`;
    if (username === undefined) return [ipKey];
    const user = createHash('sha256').update(usernameKey(username)).digest('base64url');
    return [ipKey, `${this.base}user:${user}`];
  }

  /** Each counter's key followed by its attempts-in-flight key. */
  private pairs(keys: readonly string[]): string[] {
    return keys.flatMap((key) => [key, `${key}:pending`]);
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
  async admit(username: string, ip: string): Promise<LoginAttempt | NotAdmitted> {
    const keys = this.keys(username, ip);
    const pairs = this.pairs(keys);
    const id = randomUUID();
    const { windowMs, maxFailures } = LOGIN_THROTTLE_RULES;
    try {
      const at = await this.redis.loginThrottleAdmit(pairs.length, ...pairs, windowMs, maxFailures, id);
      this.outage.succeeded();
      if (at === -1) return 'throttled';
      if (at === -2) return 'busy';
      return { keys, at, id };
    } catch (error) {
      this.outage.failed(error);
      // Fails open: the attempt goes on, holding no place.
      return { keys: [], at: 0, id };
    }
  }

  async fail(attempt: LoginAttempt): Promise<void> {
    if (attempt.keys.length > 0) {
      const pairs = this.pairs(attempt.keys);
      try {
        await this.redis.loginThrottleFail(pairs.length, ...pairs, LOGIN_THROTTLE_RULES.windowMs, attempt.id);
        this.outage.succeeded();
      } catch (error) {
        this.outage.failed(error);
      }
    }
    this.wake();
  }

  async release(attempt: LoginAttempt): Promise<void> {
    if (attempt.keys.length > 0) {
      try {
        const pipeline = this.redis.pipeline();
        for (const key of attempt.keys) pipeline.zrem(`${key}:pending`, attempt.id);
        await pipeline.exec();
        this.outage.succeeded();
      } catch (error) {
        this.outage.failed(error);
      }
    }
    this.wake();
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
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.base}*`, 'COUNT', 500);
      if (keys.length > 0) await this.redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}
