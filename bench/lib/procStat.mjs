/*
 * Per-process scheduler statistics from Linux's /proc: how long a process's threads ran
 * on a CPU and how long they waited in the run queue for one. On a machine that other
 * work keeps busy, wall-clock latency mixes both; the split shows what a request costs
 * (CPU) and what the machine's load added (waiting). Nanosecond counters, unlike the
 * 10 ms ticks of /proc/<pid>/stat. Elsewhere than Linux every function returns undefined.
 */
import fs from 'node:fs';

/** Child processes of this process whose command line contains `needle`. */
export function childPids(needle) {
  const pids = [];
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid) follows the command name, which is in parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

/**
 * `{cpuNs, waitNs}` of `pid`, or undefined: CPU time summed over all its threads (the
 * libuv pool, GC and compiler threads do real work too), run-queue wait of its main
 * thread only (the one that serves requests; waits of idle helper threads would add up
 * to more than the wall time).
 */
export function schedStat(pid) {
  if (pid === undefined) return undefined;
  try {
    let cpuNs = 0;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      cpuNs += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    }
    const waitNs = Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
    return { cpuNs, waitNs };
  } catch {
    return undefined;
  }
}

/** The milliseconds of CPU and run-queue waiting between two schedStat readings. */
export function schedDelta(before, after) {
  if (before === undefined || after === undefined) return undefined;
  return {
    cpuMs: (after.cpuNs - before.cpuNs) / 1e6,
    waitMs: (after.waitNs - before.waitNs) / 1e6,
  };
}
