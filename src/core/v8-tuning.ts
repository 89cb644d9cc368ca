import v8 from 'node:v8';

/**
 * V8 settings of the service's process, applied by `main` before the application loads (and by the benchmark's
 * service process, which starts the application as `main` does).
 *
 * `--no-allocation-site-pretenuring`: V8 allocates straight into the old generation the objects of any
 * allocation site whose objects it saw survive young-generation collections. Under slow requests (a module with
 * thousands of people, 400 ms each under load) the per-request objects of Fastify, Nest and `pg` all survive,
 * so their sites are marked; afterwards every cheap request's garbage goes to the old generation, which only a
 * full collection frees. Measured in the benchmark (docs/performance.md, memory): after the large read, the old
 * generation filled with 140 MiB of dead request objects between full collections and the peak RSS of the
 * cheap reads that followed rose from about 280 to 373 MiB; with the flag off, none of it.
 */
const V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

export function applyV8Flags(): void {
  for (const flag of V8_FLAGS) v8.setFlagsFromString(flag);
}
