// Summarises V8 CPU profiles (`npm run bench -- --quick --profile` writes the service's into
// bench/results/latest-profiles/, the bare implementation's into latest-bare-profiles/): self time by package (or
// node:/V8 internals) and the top functions, as a share of the sampled time outside the idle loop.
//
//   node bench/profile-summary.js bench/results/latest-profiles/*.cpuprofile [--top=40] [--us=140]
//
// With --us (the route's CPU µs per request from the same run), the layers are also given in µs per request.
import { readFileSync } from 'node:fs';
import process from 'node:process';

const files = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const perRequest = Number(process.argv.find((arg) => arg.startsWith('--us='))?.slice(5) ?? 0);
const top = Number(process.argv.find((arg) => arg.startsWith('--top='))?.slice(6) ?? 40);

function where(url) {
  if (!url) return '(V8/native)';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const own = /\/(dist\/src\/.*|bench\/.*)$/.exec(url);
  return own ? own[1].split('/').slice(0, 3).join('/') : url;
}

/** The request path's layers, by where a function lives. */
const LAYERS = [
  ['garbage collection', (pkg, fn) => fn === '(garbage collector)'],
  [
    'socket writes (kernel: loopback TCP)',
    (pkg, fn) => fn === 'writev' || fn === 'writeBuffer' || fn === 'writeUtf8String',
  ],
  ['Node HTTP and streams', (pkg) => pkg.startsWith('node:')],
  [
    'Fastify (router, hooks, reply)',
    (pkg) => /^(fastify|find-my-way|@fastify\/|@nestjs\/platform-fastify|light-my-request|avvio)/.test(pkg),
  ],
  [
    'Nest pipeline (router, guards, pipes, interceptor: @nestjs/core, rxjs)',
    (pkg) =>
      /^(@nestjs\/core|@nestjs\/common|rxjs|reflect-metadata|class-validator|class-transformer)/.test(pkg),
  ],
  ["the service's pipeline (src/core, src/http)", (pkg) => /^dist\/src\/(core|http)\//.test(pkg)],
  [
    'authentication (passport, strategy, caches)',
    (pkg) =>
      /^(passport|passport-jwt|@nestjs\/passport|jsonwebtoken|jws|jwa|lru-cache|dist\/src\/auth|dist\/src\/users)/.test(
        pkg,
      ),
  ],
  ['logging (pino)', (pkg) => /^(pino|@pinojs\/|pino-std-serializers|sonic-boom|thread-stream)/.test(pkg)],
  [
    'database driver (pg, pool, TypeORM)',
    (pkg) => /^(pg|pg-protocol|pg-pool|pg-types|postgres-|typeorm|dist\/src\/database)/.test(pkg),
  ],
  ['the route (controller, service, repository)', (pkg) => /^dist\/src\//.test(pkg)],
  ['other', () => true],
];
const byLayer = new Map();
const byPackage = new Map();
const byFunction = new Map();
let total = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map();
  for (const sample of profile.samples) counts.set(sample, (counts.get(sample) ?? 0) + 1);
  for (const [id, count] of counts) {
    const { callFrame } = nodes.get(id);
    if (callFrame.functionName === '(idle)' || callFrame.functionName === '(program)') continue;
    total += count;
    const pkg = where(callFrame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + count);
    const layer = LAYERS.find(([, test]) => test(pkg, callFrame.functionName))[0];
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + count);
    const fn = `${callFrame.functionName || '(anonymous)'} ${pkg}:${callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + count);
  }
}
const show = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${((count * 100) / total).toFixed(1).padStart(5)} %  ${name}`)
    .join('\n');
const layers = [...byLayer]
  .sort((a, b) => b[1] - a[1])
  .map(
    ([name, count]) =>
      `${((count * 100) / total).toFixed(1).padStart(5)} %` +
      (perRequest ? `  ${((count * perRequest) / total).toFixed(1).padStart(6)} µs` : '') +
      `  ${name}`,
  )
  .join('\n');
process.stdout.write(`samples outside idle: ${total}\n\nby layer:\n${layers}\n\n`);
process.stdout.write(`by package:\n${show(byPackage, 25)}\n\n`);
process.stdout.write(`by function (self):\n${show(byFunction, top)}\n`);
