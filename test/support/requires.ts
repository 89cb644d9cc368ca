import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { probeTestRedis } from './redis.js';

/** Marks a skipped block's title; test/reporters/skip-reporter.js prints one line per such block. */
export const SKIP_MARK = '[skipped: ';

/** Something outside the project that some tests need and an ordinary `npm test` may not have. */
export interface Requirement {
  /** What is missing, for the skip line: "a Chromium browser (`chromium` on PATH)". */
  needs: string;
  /** Where it was found, or undefined when absent. */
  found: string | undefined;
  /** How to provide it: "install it with `bash .ci/install-chromium.sh`". */
  enable: string;
  /** The environment switch (set to 1 in CI) under which absence fails the run instead of skipping. */
  requiredBy: string;
}

/** The first executable called `name` on PATH, as a shell would find it. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Debian's Chromium (`.ci/install-chromium.sh`), never a browser Playwright downloads. */
export function chromiumRequirement(): Requirement {
  return {
    needs: 'a Chromium browser (`chromium` on PATH)',
    found: onPath('chromium'),
    enable: 'install it with `bash .ci/install-chromium.sh`',
    requiredBy: 'REQUIRE_BROWSER',
  };
}

/** A Redis answering at REDIS_TEST_URL or 127.0.0.1:6379 (the shared login throttle, the two-instance test). */
export async function redisRequirement(): Promise<Requirement> {
  const { url, missing } = await probeTestRedis();
  return {
    needs: `a Redis at ${url}`,
    found: missing === undefined ? url : undefined,
    enable: 'start one (Debian: `apt-get install redis-server`) or set REDIS_TEST_URL',
    requiredBy: 'REQUIRE_REDIS',
  };
}

/** Running as root (uid 0), as in a container: the embedded PostgreSQL then runs as the `postgres` user. */
export function rootRequirement(): Requirement {
  return {
    needs: 'running as root (uid 0)',
    found: process.getuid?.() === 0 ? 'uid 0' : undefined,
    enable: 'run the slow tests as root (a container, or `sudo npm run test:slow`)',
    requiredBy: 'REQUIRE_ROOT',
  };
}

/**
 * `describe` when the requirement is met. Otherwise the block is skipped (Jest counts its tests as skipped,
 * never as passed) under a title that says what is missing and how to enable it — unless the requirement's
 * switch is set to 1, when the test file fails to load instead.
 */
export function describeWhenAvailable(requirement: Requirement, title: string, body: () => void): void {
  if (requirement.found !== undefined) {
    describe(title, body);
    return;
  }
  if (process.env[requirement.requiredBy] === '1') {
    throw new Error(
      `${requirement.requiredBy}=1 but ${requirement.needs} is missing: ${requirement.enable}, or unset ${requirement.requiredBy} to skip these tests`,
    );
  }
  describe.skip(
    `${title} ${SKIP_MARK}needs ${requirement.needs}; ${requirement.enable} to run it; ${requirement.requiredBy}=1 makes its absence fail]`,
    body,
  );
}
