// `npm run start:dev`: builds, then keeps rebuilding on change (tsc --watch) and restarts the service
// whenever dist/ changes (node --watch). Ctrl-C or SIGTERM stops both.
import { spawn, execFileSync } from 'node:child_process';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });

const children = [
  spawn(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
    cwd: ROOT,
    stdio: 'inherit',
  }),
  spawn(process.execPath, ['--watch-path=dist', '--watch-preserve-output', 'dist/src/main.js'], {
    cwd: ROOT,
    stdio: 'inherit',
  }),
];

let stopping = false;
/** @param {NodeJS.Signals} signal */
function stop(signal) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(signal, () => stop(signal));
for (const child of children) {
  child.on('exit', (code) => {
    stop('SIGTERM');
    if (!children.some((other) => other.exitCode === null && other.signalCode === null))
      process.exit(code ?? 0);
  });
}
