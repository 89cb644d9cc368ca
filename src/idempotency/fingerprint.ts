import { createHash } from 'node:crypto';

/** 1..255 visible ASCII characters (docs/api.md §17). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
export const INVALID_IDEMPOTENCY_KEY_MESSAGE = 'Idempotency-Key must be 1-255 visible ASCII characters';
export const KEY_REUSED_MESSAGE = 'Idempotency-Key was already used for another request';
export const KEY_IN_PROGRESS_MESSAGE = 'A request with this Idempotency-Key is in progress';

/** The keys whose values a replayed answer gives as null, wherever they are in it. */
const SECRET_KEYS = new Set(['token', 'secret', 'password']);

/** JSON with every object's keys sorted, so two texts of the same value give the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What makes two requests "the same": method, path, query string as sent, and the body (`body` is the parsed
 * JSON value, compared as a value, or the digest of the bytes of another body).
 */
export function requestFingerprint(method: string, url: string, body: unknown): Buffer {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const query = at === -1 ? '' : url.slice(at + 1);
  const bodyText = Buffer.isBuffer(body)
    ? `bytes:${body.toString('hex')}`
    : `json:${canonicalJson(body ?? null)}`;
  return createHash('sha256')
    .update(JSON.stringify([method, path, query, bodyText]))
    .digest();
}

/** The answer as it is replayed: `token`, `secret` and `password` values null, wherever they are. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, SECRET_KEYS.has(key) ? null : withoutSecrets(inner)]),
    );
  }
  return value;
}
