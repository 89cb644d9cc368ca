import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The pages that tell people what to run; every command they give must exist (after `npm run build`). */
const PAGES = ['README.md', 'docs/containers.md'];
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
  .scripts;

interface Command {
  page: string;
  text: string;
}

function commands(pattern: RegExp): Command[] {
  return PAGES.flatMap((page) =>
    [...readFileSync(page, 'utf8').matchAll(pattern)].map((match) => ({ page, text: match[0] })),
  );
}

describe('commands the README and docs/containers.md give', () => {
  it('every `npm run X`, `npm start` and `npm test` is a script in package.json', () => {
    const found = commands(/\bnpm (?:run ([a-z][\w:.-]*)|(start|test)\b)/g);
    expect(found.length).toBeGreaterThanOrEqual(8);
    const missing = found.filter(({ text }) => scripts[text.replace(/^npm (run )?/, '')] === undefined);
    expect(missing).toEqual([]);
  });

  it('every `node dist/…` file exists after the build, and every `bash .ci/…` script exists', () => {
    const found = commands(/\b(?:node|bash) ((?:dist|\.ci)\/[\w./-]+\.(?:js|sh))/g);
    expect(found.filter(({ text }) => text.startsWith('node dist/')).length).toBeGreaterThanOrEqual(2);
    const missing = found.filter(({ text }) => !existsSync(path.resolve(text.split(' ')[1])));
    expect(missing).toEqual([]);
  });

  it('every command-line subcommand given (`cli.js user:create`, `npm run cli -- user:create`) is one it knows', () => {
    const found = commands(/(?:dist\/src\/cli\.js|npm run cli --) ([a-z]+:[a-z]+)/g);
    expect(found.length).toBeGreaterThanOrEqual(2);
    const usage = spawnSync(process.execPath, ['dist/src/cli.js', '--help'], { encoding: 'utf8' });
    expect(usage.status).toBe(0);
    for (const { text } of found) expect(usage.stdout).toContain(text.split(' ').at(-1));
    const unknown = spawnSync(process.execPath, ['dist/src/cli.js', 'user:nothing'], { encoding: 'utf8' });
    expect(unknown.status).toBe(64);
  });
});

describe('the Nest CLI (nest-cli.json), which `npm run build` and `npm run start:dev` run', () => {
  const nest = JSON.parse(readFileSync('nest-cli.json', 'utf8')) as {
    sourceRoot: string;
    entryFile: string;
    compilerOptions: { builder: string; tsConfigPath: string };
  };

  it('is installed, and the scripts use it', () => {
    expect(existsSync('node_modules/.bin/nest')).toBe(true);
    expect(scripts.build).toBe('nest build');
    expect(scripts['start:dev']).toMatch(/^nest start --watch\b/);
  });

  it('builds with tsc and tsconfig.build.json, and starts the file `npm start` and the image run', () => {
    expect(nest.compilerOptions).toMatchObject({ builder: 'tsc', tsConfigPath: 'tsconfig.build.json' });
    // `nest start` runs <outDir>/<sourceRoot>/<entryFile>.js; outDir is dist (tsconfig.json).
    const entry = path.posix.join('dist', nest.sourceRoot, `${nest.entryFile}.js`);
    expect(entry).toBe('dist/src/main.js');
    expect(scripts.start).toBe(`node ${entry}`);
    expect(existsSync(entry)).toBe(true);
  });
});
