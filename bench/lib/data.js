// Data: the demo generator (src/database/demo-data.ts) at the benchmark's scale, into the migrated database, and
// the records the routes are measured on.
import process from 'node:process';
import pg from 'pg';
import { log, USER_PASSWORD } from './options.js';

export async function seed(databaseUrl, options) {
  const { DataSource } = await import('typeorm');
  const { loadConfig } = await import('../../dist/src/config/app-config.js');
  const { commandConfig, openCommandContext } = await import('../../dist/src/command.module.js');
  const { seedDemoData } = await import('../../dist/src/database/demo-data.js');
  const { PasswordHasher } = await import('../../dist/src/users/password-hasher.js');
  const { UsersService } = await import('../../dist/src/users/users.service.js');
  // The users writer of `npm run seed:demo`, with no bound on a statement's time (a million users take minutes).
  const config = loadConfig({ ...process.env, DB_LONG_STATEMENT_TIMEOUT_MS: String(86_400_000) });
  const app = await openCommandContext(commandConfig(config, databaseUrl, 'long'));
  const dataSource = app.get(DataSource);
  try {
    const started = Date.now();
    let last = -1;
    const result = await seedDemoData(dataSource, {
      ...options,
      users: app.get(UsersService),
      // One argon2 hash shared by every generated user.
      passwordHash: await new PasswordHasher().hash(USER_PASSWORD),
      progress: (done, step) => {
        const percent = Math.round(done * 100);
        if (percent === last) return;
        last = percent;
        log(`seed ${String(percent).padStart(3)}% ${((Date.now() - started) / 1000).toFixed(1)} s ${step}`);
      },
    });
    log(
      `seeded ${result.users} users, ${result.modules} modules, ${result.roles} roles in ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    await dataSource.query('CHECKPOINT');
    return { ...result, seconds: Number(((Date.now() - started) / 1000).toFixed(1)) };
  } finally {
    await app.close();
  }
}

/**
 * The bare side searches with `lower(col) LIKE lower(pattern)` on trigram indexes of lower(code) and
 * lower(description). The service's schema has them since migration ModuleSearchLower; against an older service
 * (a "before" run) the bench creates them, so that the lean side always has the index its query needs.
 */
export function bareSearchIndexes(databaseUrl) {
  return withClient(databaseUrl, async (client) => {
    for (const column of ['code', 'description']) {
      const { rowCount } = await client.query(
        `SELECT 1 FROM pg_indexes WHERE tablename = 'modules' AND indexdef LIKE $1`,
        [`%gin (lower((${column})::text) gin_trgm_ops)%`],
      );
      if (rowCount === 0) {
        log(`creating a trigram index on lower(${column}) for the bare side`);
        await client.query(
          `CREATE INDEX bench_modules_${column}_lower ON modules USING gin (lower(${column}) gin_trgm_ops)`,
        );
        await client.query(`ANALYZE modules`);
      }
    }
  });
}

/** The records the routes are measured on, found in the generated data. */
export function subjects(databaseUrl) {
  return withClient(databaseUrl, async (client) => {
    const one = async (sql) => (await client.query(sql)).rows[0];
    const big = await one(
      `SELECT module_id AS id, count(*)::int AS n FROM user_module_roles GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`,
    );
    const small = await one(
      `SELECT r.module_id AS id, c.n, min(u.username) AS member
       FROM (SELECT module_id, count(*)::int AS n FROM user_module_roles GROUP BY 1) c
       JOIN user_module_roles r ON r.module_id = c.module_id AND r.role = 'Student'
       JOIN users u ON u.id = r.user_id
       WHERE c.n BETWEEN 9 AND 14 GROUP BY r.module_id, c.n ORDER BY abs(c.n - 11), r.module_id LIMIT 1`,
    );
    const member = await one(
      `SELECT u.username, count(*)::int AS n FROM user_module_roles r JOIN users u ON u.id = r.user_id
       GROUP BY u.id HAVING count(*) = 20 AND bool_and(r.role = 'Student') ORDER BY u.id LIMIT 1`,
    );
    const { n: modules } = await one(`SELECT count(*)::int AS n FROM modules`);
    const server = await one(`SELECT current_setting('server_version') AS version`);
    return { big, small, member, modules, serverVersion: server.version };
  });
}

/** Runs `work` with a client of its own on the database, ended afterwards. */
async function withClient(databaseUrl, work) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
