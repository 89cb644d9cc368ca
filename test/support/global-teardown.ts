import { rm } from 'node:fs/promises';
import pg from 'pg';

export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as { __testDatabase?: { stop(): Promise<void>; dataDir: string } })
    .__testDatabase;
  if (embedded) {
    await embedded.stop();
    await rm(embedded.dataDir, { recursive: true, force: true });
    return;
  }
  const name = process.env.TEST_DATABASE_NAME;
  if (process.env.DATABASE_URL && name) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
