import { Logger } from '@nestjs/common';
import { RedisOutage } from './redis.module.js';

/** A logger that keeps its warnings and its ordinary lines instead of printing them. */
class RecordingLogger extends Logger {
  readonly warnings: string[] = [];
  readonly lines: string[] = [];

  override warn(message: unknown): void {
    this.warnings.push(String(message));
  }

  override log(message: unknown): void {
    this.lines.push(String(message));
  }
}

describe(RedisOutage.name, () => {
  it('logs an outage once when it starts and once when it ends', () => {
    const logger = new RecordingLogger('test');
    const { warnings: warn, lines: log } = logger;
    const outage = new RedisOutage(logger);
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
