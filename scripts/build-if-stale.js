// `npm start`'s prestart: builds only when dist/ is older than its sources, so a start after a build (or a
// second start) does not spend a full TypeScript compile. Stale means: some .ts file of the build
// (src/ without tests, ormconfig.ts) has no compiled .js in dist/, or is newer than it, or a tsconfig or
// package.json or nest-cli.json changed after the oldest output. It builds as `npm run build` does (`nest build`,
// configured by nest-cli.json); `npm run build` always rebuilds.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** @param {string} file @returns {number | undefined} */
function mtime(file) {
  try {
    return statSync(path.join(ROOT, file)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** @param {string} dir @returns {string[]} */
function sources(dir) {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(dir, file));
}

/** @returns {string | undefined} why dist/ must be rebuilt, or undefined when it is current */
function staleness() {
  let oldestOutput = Infinity;
  for (const source of [...sources('src'), 'ormconfig.ts']) {
    const output = path.join('dist', source.replace(/\.ts$/, '.js'));
    const built = mtime(output);
    if (built === undefined) return `${output} is missing`;
    if ((mtime(source) ?? 0) > built) return `${source} changed`;
    oldestOutput = Math.min(oldestOutput, built);
  }
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'nest-cli.json']) {
    if ((mtime(file) ?? 0) > oldestOutput) return `${file} changed`;
  }
  return undefined;
}

const reason = staleness();
if (reason === undefined) {
  process.stderr.write('dist/ is current: not rebuilding\n');
} else {
  process.stderr.write(`Building (${reason})\n`);
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
