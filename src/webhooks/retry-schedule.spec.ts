import { RetrySchedule } from './retry-schedule.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe(RetrySchedule.name, () => {
  it('waits about 5 s, 30 s, 2 min, 10 min, 1 h, 6 h, then every 6 h', () => {
    const schedule = new RetrySchedule(1);
    expect([1, 2, 3, 4, 5, 6, 7, 12].map((attempt) => schedule.delayAfter(attempt))).toEqual([
      5000,
      30_000,
      2 * MINUTE,
      10 * MINUTE,
      HOUR,
      6 * HOUR,
      6 * HOUR,
      6 * HOUR,
    ]);
  });

  it('gives up once the next attempt would fall more than 3 days after the first', () => {
    const schedule = new RetrySchedule(1);
    const first = new Date('2026-11-01T00:00:00Z');
    const at = (ms: number) => new Date(first.getTime() + ms);
    expect(schedule.nextAttemptAt(1, first, at(0))).toEqual(at(5000));
    expect(schedule.nextAttemptAt(14, first, at(66 * HOUR))).toEqual(at(72 * HOUR));
    expect(schedule.nextAttemptAt(15, first, at(72 * HOUR))).toBeNull();
    // 1 + 6 fixed waits, then 6-hourly: the 3 days hold 17 attempts.
    let now = first;
    let attempts = 1;
    for (let next = schedule.nextAttemptAt(1, first, now); next; attempts++) {
      now = next;
      next = schedule.nextAttemptAt(attempts + 1, first, now);
    }
    expect(attempts).toBe(17);
  });

  it('shrinks every span by the scale', () => {
    const schedule = new RetrySchedule(0.001);
    expect(schedule.delayAfter(1)).toBe(5);
    expect(schedule.giveUpAfterMs).toBe(259_200);
  });
});
