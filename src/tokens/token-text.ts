import { createHash, randomBytes } from 'node:crypto';

/** `mas_` + 32 random bytes in base64url (43 characters, no padding). */
const TOKEN_TEXT = /^mas_[A-Za-z0-9_-]{43}$/;

export const TOKEN_PREFIX = 'mas_';

export const newTokenText = (): string => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;

/** Whether a bearer value has the shape of an integration token (one that does not is never looked up). */
export const isTokenText = (text: string): boolean => TOKEN_TEXT.test(text);

/**
 * What is stored of a token: its SHA-256. The token is 256 random bits, so a plain hash is enough (no salt or
 * slow hash: nothing to guess), and a lookup is one index probe.
 */
export const tokenHash = (text: string): Buffer => createHash('sha256').update(text).digest();
