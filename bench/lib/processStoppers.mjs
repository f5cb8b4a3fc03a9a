// The processes a bench script started, stopped in reverse order at the end, and also on
// SIGINT/SIGTERM so that none is left behind.

/**
 * Returns `{ stoppers, stopAll }`: push a `() => Promise` per started process onto `stoppers`;
 * `stopAll()` runs them newest first (a failing stop is logged, the others still run). A signal
 * stops everything and exits with 1.
 */
export function processStoppers(log) {
  const stoppers = [];
  // Calls queue behind each other: a signal's stopAll and the script's own (its `finally`) may
  // overlap, and the second must not return (and let the script exit) while the first is still
  // stopping processes it took off the list.
  let stopping = Promise.resolve();
  function stopAll() {
    stopping = stopping.then(async () => {
      for (const stop of stoppers.splice(0).reverse())
        await stop().catch(error => log(`stop failed: ${error}`));
    });
    return stopping;
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      log(`${signal}: stopping the processes started so far`);
      stopAll().finally(() => process.exit(1));
    });
  }
  return { stoppers, stopAll };
}

/**
 * Runs a bench script's `main` (which resolves with its Markdown lines), stops every process
 * it started however it ends (`stopAll` of {@link processStoppers}), then prints the lines; a
 * failure goes to stderr with exit code 1.
 */
export function runBench(main, stopAll) {
  main()
    .finally(stopAll)
    .then(output => process.stdout.write(`${output.join('\n')}\n`))
    .catch(error => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      process.exitCode = 1;
    });
}
