/*
 * Keeps bench/mcp-access.mjs from rotting (contract mcp-access §10.4): its --smoke mode (two real
 * replicas on PostgreSQL, 5 approve → list_changed and revoke → list_changed cycles across them)
 * completes, and every cycle's change reached alice's stream on the other replica with her tool
 * list following (the script checks it and fails otherwise). Timings of a smoke run mean nothing
 * and are not asserted: the 1 s bound on p99 is the full run's (docs/benchmarks.md).
 */
import { runBenchSmoke, stopRunningSmoke, tableAfter } from '../testing/benchSmoke';

// A timed-out run is stopped with SIGTERM; the script then stops the processes it started.
afterEach(stopRunningSmoke);

describe('bench/mcp-access.mjs --smoke (two real replicas on PostgreSQL)', () => {
  it('brings every approval and revocation to the other replica’s stream and prints its table', async () => {
    const { code, stdout, stderr } = await runBenchSmoke('bench/mcp-access.mjs');
    if (code !== 0) {
      throw new Error(
        `bench/mcp-access.mjs --smoke exited with ${code}:\n${stderr.slice(-4000)}\n${stdout}`,
      );
    }
    const table = tableAfter(stdout, '### Approval and revocation to `list_changed`');
    expect(table.map(([change, cycles, , , , , bound]) => [change, cycles, bound])).toEqual([
      ['approve', '5', 'not applied (smoke)'],
      ['revoke', '5', 'not applied (smoke)'],
    ]);
    for (const row of table) {
      for (const cell of row.slice(2, 6)) expect(cell).toMatch(/^-?\d+(\.\d+)?$/);
    }
  }, 600_000);
});
