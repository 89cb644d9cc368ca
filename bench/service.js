// The service under measurement, in a process of its own so that the load generator (bench/run.js) does not
// share its event loop. Forked by run.js with an IPC channel: it starts the built service from the
// environment (port 0 on 127.0.0.1), sends `{ url }` once it listens, and stops on `'stop'` or when the
// parent goes away.
import 'reflect-metadata';
import process from 'node:process';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import v8 from 'node:v8';
import { loadConfig } from '../dist/src/config/app-config.js';
import { startService } from '../dist/src/app.js';
import { ChangeEventsService } from '../dist/src/events/change-events.service.js';
import { applyV8Flags } from '../dist/src/core/v8-tuning.js';

// The V8 settings `main` applies (src/core/v8-tuning.ts), so the benchmark measures the process as it runs.
applyV8Flags();

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
// The change-event scenario (bench/run.js): module creates with their events written, and with the recorder
// switched off in this process, to measure what writing an event costs a write.
const events = service.app.get(ChangeEventsService);
const record = events.record;
process.on('message', (message) => {
  if (message !== 'events:off' && message !== 'events:on') return;
  events.record = message === 'events:off' ? () => Promise.resolve() : record;
  process.send({ events: message });
});

// Where the resident memory is (bench/README.md, "Memory"): the process's figures and V8's heap spaces.
process.on('message', (message) => {
  if (message === 'heap-snapshot') {
    // A V8 heap snapshot for bench/heap-summary.js (written in the working directory).
    process.send({ snapshot: v8.writeHeapSnapshot() });
    return;
  }
  if (message !== 'memory') return;
  const spaces = Object.fromEntries(
    v8
      .getHeapSpaceStatistics()
      .map((space) => [space.space_name, Math.round(space.physical_space_size / 1048576)]),
  );
  const usage = Object.fromEntries(
    Object.entries(process.memoryUsage()).map(([key, value]) => [key, Math.round(value / 1048576)]),
  );
  process.send({ memory: { ...usage, spaces } });
});
// Where the memory is at a route's peak (bench/run.js): process.memoryUsage() every 20 ms from 'peak:start',
// and on 'peak:stop' the sample with the largest resident size (MiB).
let peakTimer;
let peakSample;
process.on('message', (message) => {
  if (message === 'peak:start') {
    clearInterval(peakTimer);
    peakSample = undefined;
    // rss() alone is cheap (one read of /proc/self/stat); the whole breakdown only for a new largest one.
    peakTimer = setInterval(() => {
      if (peakSample && process.memoryUsage.rss() <= peakSample.rss) return;
      const large = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'large_object_space');
      peakSample = { ...process.memoryUsage(), largeObjectsUsed: large?.space_used_size ?? 0 };
    }, 20);
    process.send({ peak: 'started' });
  }
  if (message === 'peak:stop') {
    clearInterval(peakTimer);
    const sample = peakSample ?? process.memoryUsage();
    process.send({
      peak: Object.fromEntries(
        Object.entries(sample).map(([key, value]) => [key, Math.round(value / 1048576)]),
      ),
    });
  }
});
process.on('disconnect', () => void stop(1));
process.send({ url: service.url });
