/*
 * What a benchmark result needs next to it: the machine (cores, memory, CPU model), the
 * Node version and the load average when the numbers were taken. Other work running on
 * the same machine changes every timing, so each run records `uptime`'s load averages.
 */
import fs from 'node:fs';
import os from 'node:os';

/** Static facts about this machine and runtime. */
export function machineFacts() {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const match = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
    if (match) cpuModel = match[1].trim();
  } catch {
    // not Linux: os.cpus() is good enough
  }
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    cpuModel,
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

/** The 1, 5 and 15 minute load averages, as `uptime` prints them. */
export function loadAverage() {
  return os
    .loadavg()
    .map(value => value.toFixed(2))
    .join(', ');
}
