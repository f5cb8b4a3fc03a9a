/*
 * Per-call options of client-node 1.4 API calls.
 *
 * - client-node sets no timeout at all: every request gets its own AbortSignal through
 *   Observable-style per-call middleware (a signal shared across calls would abort them all).
 * - Merge patches must say `application/merge-patch+json`: client-node's default for `patch*`
 *   is JSON patch, which the API server refuses for an object body.
 */
import type * as k8s from '@kubernetes/client-node';

/**
 * Options for one API call that abort it after `timeoutMs` (a fresh signal per call).
 *
 * @public
 */
export function requestTimeoutOptions(
  lib: typeof k8s,
  timeoutMs: number,
): k8s.ConfigurationOptions<k8s.ObservableMiddleware> {
  return {
    middleware: [
      {
        pre: ctx => {
          ctx.setSignal(AbortSignal.timeout(timeoutMs));
          return new lib.Observable(Promise.resolve(ctx));
        },
        post: res => new lib.Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/**
 * Options for one `patch*` call sending a JSON merge patch, with the timeout of
 * {@link requestTimeoutOptions}.
 *
 * @public
 */
export function mergePatchOptions(
  lib: typeof k8s,
  timeoutMs: number,
): k8s.ConfigurationOptions<k8s.ObservableMiddleware> {
  return lib.setHeaderOptions(
    'Content-Type',
    lib.PatchStrategy.MergePatch,
    requestTimeoutOptions(lib, timeoutMs),
  );
}
