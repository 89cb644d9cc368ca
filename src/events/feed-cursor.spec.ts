import { comparePositions, decodeCursor, encodeCursor, FEED_START } from './feed-cursor.js';

describe('feed cursors', () => {
  it('round-trips a position', () => {
    const position = { txid: '9223372036854775807', id: '42' };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
    expect(decodeCursor(encodeCursor(FEED_START))).toEqual(FEED_START);
  });

  it('is base64url text without padding', () => {
    expect(encodeCursor({ txid: '1234', id: '5' })).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each([
    ['empty text', ''],
    ['not base64url', 'abc+/='],
    ['a plain number', '42'],
    ['one number encoded', Buffer.from('42').toString('base64url')],
    ['a negative id', Buffer.from('1.-2').toString('base64url')],
    ['leading zeros', Buffer.from('01.2').toString('base64url')],
    ['beyond 64 bits', Buffer.from('9223372036854775808.1').toString('base64url')],
    ['padding', `${encodeCursor({ txid: '1', id: '2' })}=`],
    ['a very long text', 'A'.repeat(65)],
  ])('refuses %s', (_name, text) => {
    expect(decodeCursor(text)).toBeUndefined();
  });

  it('refuses a non-canonical spelling of a valid position', () => {
    // 'MTIuMw' is the cursor of 12.3; 'MTIuMx' differs only in bits base64 decoding drops.
    expect(encodeCursor({ txid: '12', id: '3' })).toBe('MTIuMw');
    expect(Buffer.from('MTIuMx', 'base64url').toString()).toBe('12.3');
    expect(decodeCursor('MTIuMx')).toBeUndefined();
  });

  it('orders positions by txid, then id, numerically', () => {
    expect(comparePositions({ txid: '9', id: '100' }, { txid: '10', id: '1' })).toBe(-1);
    expect(comparePositions({ txid: '10', id: '2' }, { txid: '10', id: '10' })).toBe(-1);
    expect(comparePositions({ txid: '10', id: '2' }, { txid: '10', id: '2' })).toBe(0);
    expect(comparePositions({ txid: '11', id: '1' }, { txid: '10', id: '9' })).toBe(1);
  });
});
