/*
 * Waits until a plugin is up, asking its permission metadata route (see module.ts): 404 (routes
 * not mounted) and 503 (init not finished within the start-up pause) mean "ask again"; any other
 * answer — 401 without a token, 200 — means up.
 */

/** How soon a plugin that is not up is asked again (ms). */
const ASK_AGAIN_MS = 250;

/** Answers that mean "not up yet": routes not mounted (404), init not finished (503). */
const NOT_UP = new Set([404, 503]);

/**
 * Resolves true once the plugin at `metadataUrl` is up, false once `deadline` (epoch ms) has
 * passed. `askAgainMs`: how soon a plugin that is not up is asked again.
 */
export async function untilUp(
  metadataUrl: string,
  deadline: number,
  askAgainMs: number = ASK_AGAIN_MS,
): Promise<boolean> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    try {
      // Backstage holds the request while the plugin's init runs: no shorter timeout.
      const response = await fetch(metadataUrl, { signal: AbortSignal.timeout(left) });
      await response.body?.cancel();
      if (!NOT_UP.has(response.status)) return true;
    } catch {
      // not listening yet, or the deadline passed: the loop decides
    }
    await new Promise(resolve => setTimeout(resolve, askAgainMs));
  }
}
