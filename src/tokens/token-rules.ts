import { ValidateBy } from 'class-validator';

/** What an integration token may be used for (docs/api.md §14). */
export const TOKEN_SCOPES = ['scim', 'events', 'exports'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export const NAME_MAX = 100;
export const NAME_MESSAGE = `name must be 1-${NAME_MAX} characters`;
export const SCOPES_MESSAGE = `scopes must be a non-empty array of: ${TOKEN_SCOPES.join(', ')}`;
export const EXPIRES_AT_MESSAGE = 'expires_at must be a future RFC 3339 timestamp';

/** RFC 3339 date-time: date, `T` (any case), time with optional fraction, `Z` or an offset. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function nameOk(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const length = [...value].length;
  return length >= 1 && length <= NAME_MAX && value.trim() !== '' && !value.includes('\u0000');
}

export function IsTokenName() {
  return ValidateBy({
    name: 'isTokenName',
    validator: { validate: nameOk, defaultMessage: () => NAME_MESSAGE },
  });
}

function scopesOk(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((scope) => typeof scope === 'string' && (TOKEN_SCOPES as readonly string[]).includes(scope))
  );
}

export function IsTokenScopes() {
  return ValidateBy({
    name: 'isTokenScopes',
    validator: { validate: scopesOk, defaultMessage: () => SCOPES_MESSAGE },
  });
}

/** The instant an RFC 3339 text names, or null when it is not one (a calendar date that does not exist included). */
export function parseRfc3339(value: string): Date | null {
  const match = RFC3339.exec(value);
  if (!match) return null;
  const [, year, month, day, hour, minute, second] = match.map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** A string (its futureness is checked by the service against the clock) or null. */
export function IsTokenExpiry() {
  return ValidateBy({
    name: 'isTokenExpiry',
    validator: {
      validate: (value) => value === null || (typeof value === 'string' && parseRfc3339(value) !== null),
      defaultMessage: () => EXPIRES_AT_MESSAGE,
    },
  });
}

/** The scopes as stored: in the canonical order, each once. */
export const normaliseScopes = (scopes: readonly string[]): TokenScope[] =>
  TOKEN_SCOPES.filter((scope) => scopes.includes(scope));
