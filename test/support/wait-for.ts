/** How long to wait for a condition, and what it is (for the failure message). */
export interface WaitOptions {
  /** Fails once this much time has passed without the condition holding. */
  timeoutMs?: number;
  /** The condition in words: "the 500's log line", "a session waiting for the lock". */
  what: string;
  /** Between two checks. */
  intervalMs?: number;
  /** What was seen instead, for the failure message (a process's output so far). */
  seen?: () => string;
}

/**
 * Resolves with the first value `condition` returns other than `false`, `undefined` or `null`, checking every
 * `intervalMs`; rejects after `timeoutMs` with a message naming `what`. A condition that throws fails the wait at
 * once (a process that exited will not start listening later). For state a test cannot be told about (a log
 * line, a metric, a database session), never a fixed sleep.
 */
export async function waitFor<T>(
  condition: () => T | false | undefined | null | Promise<T | false | undefined | null>,
  { timeoutMs = 10_000, what, intervalMs = 20, seen }: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== false && value !== undefined && value !== null) return value;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${seen ? `; seen:\n${seen()}` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
