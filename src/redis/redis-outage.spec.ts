import { type Logger } from '@nestjs/common';
import { RedisOutage } from './redis.module.js';

describe(RedisOutage.name, () => {
  it('logs an outage once when it starts and once when it ends', () => {
    const warn: string[] = [];
    const log: string[] = [];
    const logger = { warn: (m: string) => warn.push(m), log: (m: string) => log.push(m) };
    const outage = new RedisOutage(logger as unknown as Logger);
    outage.succeeded();
    for (let i = 0; i < 5; i++) outage.failed(new Error('ECONNREFUSED'));
    expect(warn).toHaveLength(1);
    expect(warn[0]).toContain('fails open');
    outage.succeeded();
    outage.succeeded();
    expect(log).toHaveLength(1);
    outage.failed(new Error('again'));
    expect(warn).toHaveLength(2);
  });
});
