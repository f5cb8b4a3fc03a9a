/*
 * The waits of a backend connection's loop (the reconnect delay, the poll interval): they end
 * early, and quietly, when the connection closes or the attempt is abandoned.
 */

/**
 * Resolves after `ms`, or at once when `signal` aborts (never rejects); the timer does not keep
 * the process alive.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    timer.unref?.();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
