/*
 * Keeps bench/soak.mjs from rotting, and holds what a short soak can show on any machine: its
 * --smoke mode (1 minute of mixed portal and broker traffic on two real replicas and a
 * PostgreSQL with max_connections = 100) completes every operation of every kind without an
 * error, stays within the connection budget, and gives back every descriptor and database
 * connection once idle. Whether RSS and event-loop delay stay flat needs the 30-minute run
 * (docs/benchmarks.md): over one minute they show the warm-up, not a trend, and are not
 * asserted.
 */
import { runBenchSmoke, stopRunningSmoke, tableAfter } from '../testing/benchSmoke';

// A timed-out run is stopped with SIGTERM; the script then stops the processes it started.
afterEach(stopRunningSmoke);

describe('bench/soak.mjs --smoke (two real replicas, PostgreSQL of its own)', () => {
  it(
    'runs every operation kind without an error and leaks no descriptor or database connection',
    async () => {
      const { code, stdout, stderr } = await runBenchSmoke('bench/soak.mjs');
      if (code !== 0) {
        throw new Error(
          `bench/soak.mjs --smoke exited with ${code}:\n${stderr.slice(-4000)}\n${stdout}`,
        );
      }
      const operations = tableAfter(stdout, '### Soak operations');
      expect(operations.map(([kind, , errors]) => [kind, errors])).toEqual([
        ['portal read', '0'],
        ['portal key cycle', '0'],
        ['mcp echo', '0'],
        ['mcp progress', '0'],
        ['mcp session churn', '0'],
        ['skipped (50 in flight)', ''],
      ]);
      for (const [kind, count] of operations.slice(0, 5)) {
        expect({ kind, ran: Number(count) > 0 }).toEqual({ kind, ran: true });
      }
      const leaks = tableAfter(stdout, '### Soak leaks');
      expect(leaks.map(([measure, , , verdict]) => [measure, verdict])).toEqual([
        ['replica 0 open descriptors', 'no leak'],
        ['replica 1 open descriptors', 'no leak'],
        ['PostgreSQL connections (both replicas)', 'no leak'],
      ]);
      const most = Number(
        /Most PostgreSQL connections of the plugins at once: (\d+)/.exec(stdout)?.[1],
      );
      expect(most).toBeLessThanOrEqual(46);
      expect(stdout).toMatch(/^Errors: 0 of \d+ operations\.$/m);
    },
    10 * 60_000,
  );
});
