import pg from 'pg';

/** A database created for one run on an existing server; `drop()` removes it (and ends its connections). */
export interface ScratchDatabase {
  name: string;
  /** The server's URL with this database in its path. */
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates `<prefix>_<pid>_<time>` (or `name` when given) on the server of `serverUrl`, for the tests, the
 * benchmarks, the soak run and `npm run sql:generate`: each needs a database of its own beside whatever the
 * server already holds. Not used by the service itself.
 */
export async function createScratchDatabase(
  serverUrl: string,
  prefix: string,
  name = `${prefix}_${process.pid}_${Date.now()}`,
): Promise<ScratchDatabase> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Not a plain database name: ${name}`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
