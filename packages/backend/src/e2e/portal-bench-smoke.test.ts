/*
 * Keeps bench/portal.mjs from rotting: runs its --smoke mode (200 records on SQLite, a
 * few iterations, the real backend process) and checks that it finishes and prints its
 * tables. The timings of a smoke run mean nothing and are not asserted; the count of
 * internal calls is, because it does not depend on the machine: every portal request
 * must cost exactly one authorize round trip.
 */
import { runBenchSmoke, tableAfter } from '../testing/benchSmoke';

describe('bench/portal.mjs --smoke (real backend, 200 records on SQLite)', () => {
  it('completes, prints the latency tables and counts one authorize per portal request', async () => {
    const { code, stdout, stderr } = await runBenchSmoke('bench/portal.mjs');
    if (code !== 0) {
      throw new Error(`bench/portal.mjs --smoke exited with ${code}:\n${stderr}\n${stdout}`);
    }

    const http = tableAfter(stdout, '### HTTP on the real backend — SQLite');
    const requests = http.map(row => row[0]);
    expect(requests).toEqual(
      expect.arrayContaining([
        'GET /requests/my — alice',
        'GET /requests — alice',
        'GET /requests?status=Pending — carol (admin)',
      ]),
    );
    const myRequests = http.find(row => row[0] === 'GET /requests/my — alice')!;
    expect(myRequests[1]).toBe('100'); // alice's 100 keys of the fixture slice
    expect(myRequests[2]).toMatch(/^\d+(\.\d+)? \/ \d+(\.\d+)?$/); // "p50 / p99"

    const store = tableAfter(stdout, '### Store alone — SQLite');
    expect(store.map(row => row[0])).toContain('listKeys({requestedBy: alice})');

    const calls = tableAfter(stdout, '### Internal calls per portal request');
    expect(calls.length).toBeGreaterThanOrEqual(6);
    for (const [route, , requestCount, authorizePerRequest] of calls) {
      expect({ route, requestCount: Number(requestCount) > 0, authorizePerRequest }).toEqual({
        route,
        requestCount: true,
        authorizePerRequest: '1.00',
      });
    }
  }, 90_000);
});
