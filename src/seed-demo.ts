import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { AdminBootstrap } from './auth/admin-bootstrap.js';
import { commandConfig, openCommandContext } from './command.module.js';
import { type AppConfig, ConfigError, loadConfig } from './config/app-config.js';
import { type DemoResult, demoSizes, seedDemoData } from './database/demo-data.js';
import { longTimeouts, provideDatabase, runMigrations } from './database/database.js';
import { PasswordHasher } from './users/password-hasher.js';
import { UsersRepository } from './users/users.repository.js';
import { UsersService } from './users/users.service.js';

const USAGE = `Usage: npm run seed:demo [-- --scale N] [-- --password PASSWORD]

Fills the service's database (DATABASE_URL, or the embedded one under DATA_DIR; stop the service first when
it runs on the embedded database) with a demo university: at scale 1 (the default) 1 000 users, 2 000 modules
and about 10 000 roles, and 100 avatars under STORAGE_DIR. --scale 50 is the benchmark's size. Running it again
adds nothing. Every generated user has the same password (default "demo-password"); the first administrator is
created as the service would when the database has no user yet.`;

const DEMO_PASSWORD = 'demo-password';

/** A one-line progress bar on stderr, redrawn in place on a terminal and printed per step otherwise. */
function progressBar(): (done: number, step: string) => void {
  const started = Date.now();
  const width = 30;
  return (done, step) => {
    const filled = Math.round(done * width);
    const line =
      `seed:demo [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(done * 100)).padStart(3)}% ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s  ${step}`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(80)}${done >= 1 ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  };
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      scale: { type: 'string', default: '1' },
      password: { type: 'string', default: DEMO_PASSWORD },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const scale = Number(values.scale);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1000) {
    process.stderr.write(`--scale must be a number above 0 and at most 1000 (got "${values.scale}")\n`);
    return 64;
  }
  const config = loadConfig(process.env);
  const quiet = { log: () => undefined, error: (message: string) => process.stderr.write(`${message}\n`) };
  const database = await provideDatabase(config.databaseUrl, config.dataDir, quiet);
  try {
    await runMigrations(database.url, longTimeouts(config));
    const app = await openCommandContext(seedTimeouts(commandConfig(config, database.url, 'long'), scale));
    try {
      const dataSource = app.get(DataSource);
      const users = app.get(UsersService);
      const hasher = app.get(PasswordHasher);
      // The first administrator, as the service creates it at its first start (prints a generated password).
      await new AdminBootstrap(config, app.get(UsersRepository), hasher, users).onApplicationBootstrap();
      const size = demoSizes(scale);
      process.stderr.write(
        `seed:demo: scale ${scale}: ${size.users} users, ${size.modules} modules over ${size.years} years\n`,
      );
      // One argon2 hash for every generated user: hashing each would take about 0.1 s per user.
      const passwordHash = await hasher.hash(values.password);
      const result = await seedDemoData(dataSource, {
        scale,
        users,
        passwordHash,
        storageDir: config.storageDir,
        progress: progressBar(),
      });
      // One user of each role, to sign in as.
      const examples = await dataSource.query<{ role: string; username: string }[]>(
        `SELECT DISTINCT ON (r.role) r.role::text AS role, u.username
         FROM user_module_roles r JOIN users u ON u.id = r.user_id
         WHERE u.email LIKE '%@demo.example.edu' ORDER BY r.role, u.id`,
      );
      process.stdout.write(
        `Database now holds ${result.users} users, ${result.modules} modules, ${result.roles} roles ` +
          `(this run added ${result.inserted.users} users, ${result.inserted.modules} modules, ` +
          `${result.inserted.roles} roles, ${result.avatars} avatars).\n` +
          `Every demo user has the password "${values.password}" (hashed once, shared). For example:\n` +
          examples.map((row) => `  ${row.role.padEnd(18)} ${row.username}\n`).join('') +
          rolloverHint(result.rollover),
      );
    } finally {
      await app.close();
    }
  } finally {
    await database.stop();
  }
  return 0;
}

/**
 * The generator writes each table in one statement (scale × 2 000 modules at once), so the bound of long work,
 * meant for the service's own (DB_LONG_STATEMENT_TIMEOUT_MS, 120 s), grows with the scale unless it was set:
 * 120 s for every 50 of scale. At scale 1 000 on a loaded machine the modules' statement alone took over 125 s.
 */
function seedTimeouts<C extends AppConfig>(config: C, scale: number): C {
  if (process.env.DB_LONG_STATEMENT_TIMEOUT_MS !== undefined) return config;
  const statementMs = Math.max(config.dbStatementTimeoutMs, Math.ceil(scale / 50) * 120_000);
  return { ...config, dbStatementTimeoutMs: statementMs, dbQueryTimeoutMs: statementMs + 5_000 };
}

/** The next step worth trying as admin, while the latest year has not been rolled over. */
function rolloverHint(rollover: DemoResult['rollover']): string {
  if (rollover.modules === 0 || rollover.alreadyRolledOver === rollover.modules) return '';
  return (
    `The ${rollover.modules} modules of ${rollover.fromYear} have no ${rollover.toYear} edition yet: as admin, try ` +
    `POST /api/modules/rollover?dry_run=true with {"from_year": ${rollover.fromYear}, "to_year": ${rollover.toYear}}.\n`
  );
}

try {
  process.exit(await main(process.argv.slice(2)));
} catch (error) {
  if (error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    process.exit(64);
  }
  process.stderr.write(
    `seed:demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
}
