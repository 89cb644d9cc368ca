import { createHash, randomBytes } from 'node:crypto';
import { type DataSource } from 'typeorm';

/** An integration token stored directly (docs/api.md §14), with its text for requests that use it. */
export async function makeIntegrationToken(
  dataSource: DataSource,
  scopes: readonly string[] = ['events'],
): Promise<{ id: number; token: string }> {
  const token = `mas_${randomBytes(32).toString('base64url')}`;
  const [row] = await dataSource.query<{ id: number }[]>(
    `INSERT INTO integration_tokens (name, scopes, token_hash) VALUES ('fixture', $1::varchar[], $2) RETURNING id`,
    [scopes, createHash('sha256').update(token).digest()],
  );
  return { id: row.id, token };
}
