// Measures how long `npm run start:dev` takes from a saved change to the new process listening:
//   node scripts/measure-dev-restart.js [rounds]   (default 3; set DATABASE_URL, PORT etc. as for the service)
// Starts `npm run start:dev`, waits for "listening on", then per round appends a comment line to
// src/health/health.controller.ts and times until the next "listening on". The file is restored at the end.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILE = path.join(ROOT, 'src/health/health.controller.ts');
const rounds = Number(process.argv[2] ?? 3);

const original = readFileSync(FILE, 'utf8');
const child = spawn('npm', ['run', 'start:dev'], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
/** @type {(() => void)[]} */
const waiting = [];
let output = '';
let seen = 0;
/** @param {Buffer} chunk */
const read = (chunk) => {
  output += chunk.toString();
  const listens = output.split('listening on').length - 1;
  while (seen < listens) {
    seen += 1;
    waiting.shift()?.();
  }
};
child.stdout.on('data', read);
child.stderr.on('data', read);
child.on('exit', (code) => {
  if (waiting.length > 0) {
    process.stderr.write(`npm run start:dev exited (${code}) before listening:\n${output}\n`);
    process.exit(1);
  }
});
/** @returns {Promise<void>} */
const nextListen = () => new Promise((resolve) => waiting.push(resolve));

const started = Date.now();
await nextListen();
process.stdout.write(`first start: ${Date.now() - started} ms\n`);
/** @type {number[]} */
const times = [];
try {
  for (let round = 0; round < rounds; round += 1) {
    const listening = nextListen();
    const changed = Date.now();
    appendFileSync(FILE, `// restart ${round}\n`);
    await listening;
    times.push(Date.now() - changed);
    process.stdout.write(`restart ${round + 1}: ${times.at(-1)} ms\n`);
  }
} finally {
  writeFileSync(FILE, original);
  child.removeAllListeners('exit');
  if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
}
process.stdout.write(`restarts (ms): ${times.join(', ')}\n`);
