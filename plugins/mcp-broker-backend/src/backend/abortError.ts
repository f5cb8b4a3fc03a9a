/*
 * The one error of an operation aborted by a signal, in Node's words (what the `signal` option
 * of `http.request` throws: name `AbortError`, code `ABORT_ERR`), whoever aborted it: the backend
 * transport when its request's signal fires, a channel when a caller's own signal did. Callers
 * tell an abort from a failure by its name; what aborted it stays in `cause`.
 */

/** True for an error of an aborted operation ({@link abortError}'s, or Node's own). */
export function isAbortError(error: unknown): boolean {
  return (error as { name?: unknown } | undefined)?.name === 'AbortError';
}

/** The error an operation aborted with `reason` (a signal's `reason`) fails with. */
export function abortError(reason: unknown): Error {
  return Object.assign(new Error('The operation was aborted', { cause: reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}
