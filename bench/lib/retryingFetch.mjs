/*
 * What an HTTP client that follows the spec does with a 503 and `Retry-After`: waits that long
 * (capped) and sends the same request again. Installed as the global `fetch` of a bench process
 * (the test helpers it drives call the global fetch), it counts what it retried, by a label the
 * caller derives from the URL, so a run can report how many requests needed a retry.
 */

/** Waits at most this long for one `Retry-After`. */
const MAX_WAIT_MS = 2000;

/**
 * Wraps `base` (the original fetch): a 503 with `Retry-After` is retried up to `maxRetries`
 * times. `labelOf(url, method)` names a request for `counts.retried` and `counts.gaveUp`.
 */
export function retryingFetch(base, labelOf, maxRetries = 10) {
  const counts = { retried: new Map(), gaveUp: new Map() };
  const bump = (map, label) => map.set(label, (map.get(label) ?? 0) + 1);
  async function fetchWithRetries(input, init) {
    const url = typeof input === 'string' ? input : input.url;
    const label = labelOf(url, init?.method ?? 'GET');
    for (let attempt = 0; ; attempt++) {
      const response = await base(input, init);
      const retryAfter = response.headers.get('retry-after');
      if (response.status !== 503 || retryAfter === null) return response;
      if (attempt >= maxRetries) {
        bump(counts.gaveUp, label);
        return response;
      }
      await response.arrayBuffer().catch(() => undefined);
      bump(counts.retried, label);
      const seconds = Number(retryAfter);
      const waitMs = Number.isFinite(seconds) ? Math.min(seconds * 1000, MAX_WAIT_MS) : 1000;
      await new Promise(resolve => setTimeout(resolve, waitMs));
    }
  }
  return { fetch: fetchWithRetries, counts };
}
