/*
 * tools/call `echo` through several targets (direct, broker, mcp-hub) in alternating rounds:
 * each round runs every target once, in an order rotated per round, so slow drift on a shared
 * machine (other jobs, thermal, GC) spreads over all targets instead of landing on one.
 * Latency is measured per call; CPU per call comes from /proc deltas of each process taken
 * around each target's own run, and from process.cpuUsage() for the load generator.
 */
import { cpuMillis } from './brokerProcesses.mjs';
import { findTool } from './mcpClients.mjs';

/**
 * A target for {@link measureCalls}: `tools/call` of the echo tool whose name ends in `tool` on
 * `client`, after `warmUp` calls; `pids` are the processes whose CPU it counts ({ label: pid }).
 */
export async function warmEchoTarget({ name, client, tool, pids, warmUp }) {
  const toolName = await findTool(client, tool);
  const call = () => client.callTool({ name: toolName, arguments: { message: 'hello' } });
  for (let i = 0; i < warmUp; i += 1) await call();
  return { name, call, pids };
}

/** Runs `total` calls with `concurrency` in flight; returns latencies (ms) and wall time (ms). */
async function runCalls(call, total, concurrency) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < total) {
      next += 1;
      const t0 = performance.now();
      await call();
      latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return { latencies, wallMs: performance.now() - started };
}

/**
 * Measures each target in `targets` ({ name, call, pids: { label: pid } }) for each mode in
 * `modes` ({ name, total, concurrency }) over `rounds` alternating rounds. Returns, per mode
 * and target: latencies, wall time, calls and CPU milliseconds per process label (plus
 * `load generator`).
 */
export async function measureCalls({ targets, modes, rounds, onRound }) {
  const results = {};
  for (const mode of modes) {
    results[mode.name] = Object.fromEntries(
      targets.map(target => [target.name, { latencies: [], wallMs: 0, calls: 0, cpuMs: {} }]),
    );
  }
  for (let round = 0; round < rounds; round += 1) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const mode of modes) {
      const perRound = Math.ceil(mode.total / rounds);
      for (const target of order) {
        const before = Object.fromEntries(
          Object.entries(target.pids).map(([label, pid]) => [label, cpuMillis(pid)]),
        );
        const selfBefore = process.cpuUsage();
        const { latencies, wallMs } = await runCalls(target.call, perRound, mode.concurrency);
        const self = process.cpuUsage(selfBefore);
        const entry = results[mode.name][target.name];
        entry.latencies.push(...latencies);
        entry.wallMs += wallMs;
        entry.calls += latencies.length;
        for (const [label, pid] of Object.entries(target.pids)) {
          entry.cpuMs[label] = (entry.cpuMs[label] ?? 0) + cpuMillis(pid) - before[label];
        }
        entry.cpuMs['load generator'] =
          (entry.cpuMs['load generator'] ?? 0) + (self.user + self.system) / 1000;
      }
    }
    onRound?.(round + 1);
  }
  return results;
}
