/*
 * Polling for the plugin's tests: real servers and streams change state asynchronously, and a
 * test waits for the state it then asserts on.
 */

/**
 * Polls `check` every 20 ms until it returns a truthy value, and resolves with that value;
 * throws "timed out waiting for <what>" after `timeoutMs`.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what = 'a condition',
  timeoutMs = 8000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}
