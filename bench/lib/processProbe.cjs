/*
 * Preloaded into a backend process by bench/soak.mjs (`node --require …/processProbe.cjs`):
 * every SOAK_PROBE_INTERVAL_MS it appends one JSON line to SOAK_PROBE_FILE with what only the
 * process itself can see — its event-loop delay over the interval (perf_hooks'
 * monitorEventLoopDelay, 10 ms resolution: p50, p99, max in milliseconds), its heap — and its
 * RSS and open file descriptors. Nothing happens without SOAK_PROBE_FILE; the timer is unref'd,
 * so the probe never keeps the process alive.
 */
'use strict';

const fs = require('node:fs');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { isMainThread } = require('node:worker_threads');

const file = process.env.SOAK_PROBE_FILE;
// Worker threads get the same --require: only the main thread (the one serving requests) reports.
if (file && isMainThread) {
  const intervalMs = Number(process.env.SOAK_PROBE_INTERVAL_MS || 5000);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const openFds = () => {
    try {
      return fs.readdirSync('/proc/self/fd').length;
    } catch {
      return undefined;
    }
  };
  const timer = setInterval(() => {
    const sample = {
      t: Date.now(),
      rssBytes: process.memoryUsage.rss(),
      heapUsedBytes: process.memoryUsage().heapUsed,
      fds: openFds(),
      // The histogram's values are nanoseconds; the resolution itself is subtracted by Node.
      loopDelayMs: {
        p50: delay.percentile(50) / 1e6,
        p99: delay.percentile(99) / 1e6,
        max: delay.max / 1e6,
      },
    };
    delay.reset();
    fs.appendFileSync(file, `${JSON.stringify(sample)}\n`);
  }, intervalMs);
  timer.unref();
}
