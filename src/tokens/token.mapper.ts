import { type TokenRow } from './tokens.repository.js';

export interface TokenResponse {
  id: number;
  name: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

/** An integration token on the wire: never its text or hash. */
export function toTokenResponse(row: TokenRow): TokenResponse {
  return {
    id: Number(row.id),
    name: row.name,
    scopes: row.scopes,
    created_at: row.created_at.toISOString(),
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
  };
}
