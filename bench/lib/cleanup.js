// Clean-up: every resource registers how to release it; run in reverse order once, also on Ctrl-C.
import process from 'node:process';
import { log } from './options.js';

export const cleanups = [];
let cleaning;
export function cleanup() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const step = cleanups.pop();
      try {
        await step();
      } catch (error) {
        log(`clean-up step failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return cleaning;
}

/** Cleans up on Ctrl-C and SIGTERM, then exits with 130. */
export function cleanUpOnSignals() {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}
