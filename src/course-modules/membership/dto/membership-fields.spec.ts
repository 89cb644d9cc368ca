import { dateField, parseTimestamp } from './membership-fields.js';

describe(parseTimestamp.name, () => {
  it('reads RFC 3339 date-times with Z or an offset, a space for the T, and any fraction (to the millisecond)', () => {
    expect(parseTimestamp('2026-09-01T08:00:00Z')?.toISOString()).toBe('2026-09-01T08:00:00.000Z');
    expect(parseTimestamp('2026-09-01t08:00:00.5+02:00')?.toISOString()).toBe('2026-09-01T06:00:00.500Z');
    expect(parseTimestamp('2026-09-01 08:00:00.1234-01:30')?.toISOString()).toBe('2026-09-01T09:30:00.123Z');
    expect(parseTimestamp('2024-02-29T23:59:59z')?.toISOString()).toBe('2024-02-29T23:59:59.000Z');
  });

  it('refuses anything else: a date alone, no offset, a day or time that does not exist, other types', () => {
    for (const value of [
      '2026-09-01',
      '2026-09-01T08:00:00',
      '2026-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-09-01T24:00:00Z',
      '2026-09-01T08:60:00Z',
      '2026-09-01T08:00:00+24:00',
      '2026-13-01T00:00:00Z',
      ' 2026-09-01T08:00:00Z',
      'tomorrow',
      '',
      1_900_000_000,
      null,
    ])
      expect({ value, parsed: parseTimestamp(value) }).toEqual({ value, parsed: undefined });
  });

  it('tells an absent date (keep) from null (open) in a body', () => {
    expect(dateField(undefined)).toBeUndefined();
    expect(dateField(null)).toBeNull();
    expect(dateField('2026-09-01T08:00:00Z')).toEqual(new Date('2026-09-01T08:00:00Z'));
  });
});
