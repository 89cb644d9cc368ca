import { serviceSources } from '../testing/sources.js';

// Background work is off by construction (docs/architecture.md, "Background work"): its timers and loops live
// in src/workers/, which AppModule imports only when `config.backgroundWorkers` is true.
const files = serviceSources().filter((file) => !file.name.startsWith('testing/'));

/** The text without its comments (a comment may name the flag or a timer). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');

/**
 * The timers outside src/workers/ that repeat, each bound to one request, stream or resource, not background
 * work: it stops with what it watches.
 */
const REPEATING_TIMERS_OUTSIDE_WORKERS = [
  // The shutdown's reaper of keep-alive sockets gone idle, while the server closes.
  'app.ts',
  // A streamed answer's watch for a reader that stopped reading.
  'database/query-stream.ts',
  // A webhook address's keep-alive agent, forgotten once idle.
  'webhooks/webhook-sender.ts',
];

describe('background work is off by construction', () => {
  it('finds the sources', () => {
    expect(files.map((file) => file.name)).toEqual(
      expect.arrayContaining(['app.module.ts', 'workers/workers.module.ts']),
    );
  });

  it('reads `backgroundWorkers` in the application module only (besides its definition)', () => {
    const readers = files
      .filter((file) => /\bbackgroundWorkers\b/.test(code(file.text)))
      .map((file) => file.name);
    expect(readers.sort()).toEqual(['app.module.ts', 'config/app-config.ts']);
  });

  it('starts no repeating timer outside src/workers/ but those bound to a request, a stream or a resource', () => {
    const repeating = files
      .filter((file) => !file.name.startsWith('workers/') && /\bsetInterval\s*\(/.test(code(file.text)))
      .map((file) => file.name);
    expect(repeating.sort()).toEqual([...REPEATING_TIMERS_OUTSIDE_WORKERS].sort());
  });
});
