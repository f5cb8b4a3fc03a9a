/*
 * The error a backend request ends with when its signal aborted, in Node's words: what the
 * `signal` option of `http.request` throws, so callers tell an abort from a failure by name.
 */

/** The error a request aborted by its signal fails with (what Node's `signal` option throws). */
export function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}
