// The service under measurement, in a process of its own so that the load generator (bench/run.js) does not
// share its event loop. Forked by run.js with an IPC channel: it starts the built service from the
// environment (port 0 on 127.0.0.1), sends `{ url }` once it listens, and stops on `'stop'` or when the
// parent goes away.
import 'reflect-metadata';
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { loadConfig } from '../dist/src/config/app-config.js';
import { startService } from '../dist/src/app.js';

const config = { ...loadConfig(process.env), port: 0, host: '127.0.0.1' };
const service = await startService(config);

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  try {
    await service.close();
  } finally {
    process.exit(code);
  }
}

process.on('message', (message) => {
  if (message === 'stop') void stop(0);
  // The soak's memory check (bench/soak.js): a full collection, then the resident size.
  // V8 returns freed pages to the system a moment after a collection, hence a second one a second later.
  if (message === 'gc') {
    globalThis.gc?.();
    setTimeout(() => {
      globalThis.gc?.();
      process.send({ rss: process.memoryUsage().rss });
    }, 1000);
  }
});
process.on('disconnect', () => void stop(1));
process.send({ url: service.url });
