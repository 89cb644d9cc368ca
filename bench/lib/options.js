// The benchmarks' command line, settings and output: bench/run.js's, and `arg` and `out` of the others.
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const ROOT = path.dirname(BENCH_DIR);
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');
export const CONNECTIONS = 32;
export const POOL_SIZE = 10;
export const ADMIN_PASSWORD = 'bench-admin-password-0123';
/** Every generated user's password (the generator's users share one hash). */
export const USER_PASSWORD = 'demo-password';

export const PROFILE = process.argv.includes('--profile');
/**
 * --routes=health,me: only the routes whose name contains one of these words (for profiling one path), and only
 * the scenarios named among them (`idp`, `bulk-delete`, `change-events`).
 */
export const ROUTE_FILTER = process.argv
  .find((arg) => arg.startsWith('--routes='))
  ?.slice('--routes='.length)
  .split(',');
/** Whether a scenario other than the routes runs: always, unless --routes names others only. */
export const runsScenario = (name) => !ROUTE_FILTER || ROUTE_FILTER.includes(name);

export const log = (message) => process.stderr.write(`[bench] ${message}\n`);

/** The value of the command's `--name=value` argument, else `fallback`. */
export const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

/** A line of a benchmark's report, on stdout. */
export const out = (line) => process.stdout.write(`${line}\n`);

export const MODES = {
  // The dataset: 100 000 modules, 50 000 users, about 500 000 role rows.
  full: { scale: 50, rounds: 3, seconds: 5, warmup: 2, curve: [5, 50, 500], curveSeconds: 4 },
  // For trying it: 2 000 modules, short rounds, no curve.
  quick: { scale: 1, rounds: 1, seconds: 1, warmup: 1, curve: [], curveSeconds: 1 },
};

/** The mode the command line asks for: --quick or the full run, with --scale, --rounds, --seconds, --no-curve. */
export function modeOf(args) {
  const quick = args.includes('--quick');
  const mode = { ...(quick ? MODES.quick : MODES.full), name: quick ? 'quick' : 'full' };
  const scaleArg = args.find((arg) => arg.startsWith('--scale='));
  if (scaleArg) mode.scale = Number(scaleArg.slice('--scale='.length));
  for (const setting of ['rounds', 'seconds']) {
    const arg = args.find((a) => a.startsWith(`--${setting}=`));
    if (arg) mode[setting] = Number(arg.slice(setting.length + 3));
  }
  if (args.includes('--no-curve')) mode.curve = [];
  return mode;
}
