/*
 * The abort signal of one backend request (or one connection cycle): it aborts when any of its
 * parents aborts or its timeout passes, and `release()` detaches it from the parents.
 *
 * Why not `AbortSignal.any` / `AbortSignal.timeout`: the parents are long-lived (the
 * connection's lifetime, a connection cycle), and every request made under them would leave
 * something attached to them until garbage collection; `AbortSignal.any` also costs noticeably
 * more per request. Here each request adds one listener per parent and removes it when it is
 * done, so a long-lived signal carries only the requests that are still running.
 */

/** Reason of a request signal that aborted because its timeout passed. */
export const REQUEST_TIMED_OUT = Object.freeze({
  name: 'TimeoutError',
  message: 'the request timed out',
});

/** A request's signal and the means to end its ties to its parents. */
export interface RequestSignal {
  readonly signal: AbortSignal;
  /** True once the timeout (not a parent) aborted the signal. */
  readonly timedOut: boolean;
  /** The first parent that aborted, if one did (its `reason` says why). */
  readonly abortedParent: AbortSignal | undefined;
  /** Stops the timeout; parents can still abort the signal. */
  stopTimer(): void;
  /** Stops the timeout and detaches from the parents. Idempotent. */
  release(): void;
}

/**
 * Creates a request signal under `parents` (undefined entries are skipped) that also aborts
 * after `timeoutMs` when that is given. The timer does not keep the process alive.
 */
export function requestSignal(
  parents: ReadonlyArray<AbortSignal | undefined>,
  timeoutMs?: number,
): RequestSignal {
  const controller = new AbortController();
  const linked = parents.filter((p): p is AbortSignal => p !== undefined);
  let timedOut = false;
  let abortedParent: AbortSignal | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function onParentAbort(event: Event) {
    const parent = event.currentTarget as AbortSignal;
    abortedParent ??= parent;
    controller.abort(parent.reason);
    release();
  }
  function stopTimer() {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  }
  function release() {
    stopTimer();
    for (const parent of linked) parent.removeEventListener('abort', onParentAbort);
  }

  const already = linked.find(parent => parent.aborted);
  if (already) {
    abortedParent = already;
    controller.abort(already.reason);
  } else {
    for (const parent of linked) parent.addEventListener('abort', onParentAbort);
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(REQUEST_TIMED_OUT);
        release();
      }, timeoutMs);
      timer.unref();
    }
  }

  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    get abortedParent() {
      return abortedParent;
    },
    stopTimer,
    release,
  };
}
