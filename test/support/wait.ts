/**
 * Waiting for a condition instead of sleeping: tests poll until what they
 * expect holds, with a deadline generous enough for a loaded 2-core machine.
 * The deadline only bounds a failing test; a passing one returns as soon as
 * the condition holds.
 */

/** How long a condition may take before the test fails, on a busy machine. */
export const WAIT_MS = 15_000;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Resolves once `check` returns true (it may be async); throws naming `what`
 * when it still does not hold after `timeoutMs`.
 */
export async function until(check: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = WAIT_MS): Promise<void> {
  await eventually(async () => ((await check()) ? true : undefined), what, timeoutMs);
}

/**
 * Polls `probe` until it returns something other than undefined and returns
 * that; throws naming `what` when nothing came after `timeoutMs`.
 */
export async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what = 'value', timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not there after ${timeoutMs} ms`);
    await pause(20);
  }
}
