import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { waitFor } from './wait-for.js';

/** Whether a process with this id is running (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The built service (`npm run test:slow` builds first), for a test that runs it as a process of its own. */
export const SERVICE_MAIN = path.resolve('dist/src/main.js');

/**
 * A service process's environment: this process's without DATABASE_URL and JWT_SECRET (so the service starts
 * its embedded database and keeps a secret of its own, unless `settings` name them), a free port on the loopback
 * address, logs at `info`, and `settings`.
 */
export function serviceEnv(settings: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, JWT_SECRET: _secret, ...rest } = process.env;
  return { ...rest, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...settings };
}

/** The built service running as a process: its address, everything it wrote so far, and its exit code. */
export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Spawns the built service with `env` and waits until it says where it listens; a service that exits first, or
 * does not listen within `timeoutMs`, fails the start (and is killed), with its output in the message.
 */
export async function startServiceProcess(
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [SERVICE_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`service exited:\n${output}`);
        return /listening on (http:\/\/[^/"\s]+)\/api/.exec(output)?.[1];
      },
      { timeoutMs, what: 'the service to listen', seen: () => output },
    );
    return { child, url, output: () => output, exited };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** Runs the built service with `env` until it exits by itself (a start it refuses): its exit code and stderr. */
export async function runServiceUntilExit(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [SERVICE_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr };
}
