import { type DataSource } from 'typeorm';

/**
 * A webhook stored directly, for tests that need one to address. Its host is under `.invalid`, which never
 * resolves: a delivery to it fails at the URL check, without any connection.
 */
export async function makeWebhook(dataSource: DataSource): Promise<{ id: number }> {
  const [row] = await dataSource.query<{ id: number }[]>(
    `INSERT INTO webhooks (url, types, secret) VALUES ('https://receiver.invalid/hook', '{*}', $1) RETURNING id`,
    [`whsec_${Buffer.alloc(24, 7).toString('base64')}`],
  );
  return row;
}
