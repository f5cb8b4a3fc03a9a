/*
 * Keeps bench/broker.mjs from rotting: runs its --smoke mode (the real backend process, a
 * second one with telemetry and a rate limit, server-everything, both example servers, mcp-hub,
 * the pipe relays, the token exchange and whoami servers of the identity section; a few dozen
 * calls, 20 sessions) and checks that it finishes and prints its tables. Timings of a smoke run mean
 * nothing and are not asserted; what does not depend on the machine is: every call completed
 * on every target, every stream got the notification, every session was deleted with 204.
 */
import { runBenchSmoke, stopRunningSmoke, tableAfter } from '../testing/benchSmoke';

// A timed-out run is stopped with SIGTERM; the script then stops the processes it started.
afterEach(stopRunningSmoke);

describe('bench/broker.mjs --smoke (real backend, MCP servers, mcp-hub, pipe relay)', () => {
  it('completes every call of both eras, delivers every notification, deletes every session and prints its tables', async () => {
    const { code, stdout, stderr } = await runBenchSmoke('bench/broker.mjs');
    if (code !== 0) {
      throw new Error(
        `bench/broker.mjs --smoke exited with ${code}:\n${stderr.slice(-4000)}\n${stdout}`,
      );
    }

    const calls = tableAfter(stdout, '### tools/call `echo`');
    expect(calls.map(([mode, target, callCount]) => [mode, target, callCount])).toEqual([
      ['sequential', 'direct', '20'],
      ['sequential', 'pipe', '20'],
      ['sequential', 'broker', '20'],
      ['sequential', 'mcp-hub', '20'],
      ['sequential', 'broker, static token', '20'],
      ['10 in flight', 'direct', '40'],
      ['10 in flight', 'pipe', '40'],
      ['10 in flight', 'broker', '40'],
      ['10 in flight', 'mcp-hub', '40'],
      ['10 in flight', 'broker, static token', '40'],
    ]);
    for (const row of calls) {
      expect(Number(row[3])).toBeGreaterThan(0); // calls/s
      expect(Number(row.at(-1))).toBeGreaterThan(0); // the load generator's CPU per call
    }
    // The pipe relay's own process is measured (a few calls may take no clock tick: >= 0).
    const pipeCpuColumn = 8; // mode, target, calls, calls/s, p50, p99, everything, broker, pipe
    for (const row of calls.filter(([, target]) => target === 'pipe'))
      expect(row[pipeCpuColumn]).toMatch(/^\d+\.\d\d$/);
    // The broker's ratios with the pipe floor beside them.
    expect(stdout).toMatch(/÷ direct throughput, 10 in flight \| \d+\.\d\d× \| \d+\.\d\d×/);
    expect(stdout).toMatch(/relay process CPU per call, 10 in flight \| [\d.]+ ms \| [\d.]+ ms/);

    // The 2026-07-28 path: SDK v2 client → broker → the modern example server, beside the same
    // client straight to that server and through the pipe relay.
    const modernHeading = '### tools/call `echo`, 2026-07-28';
    const modern = tableAfter(stdout, modernHeading);
    expect(modern.map(([mode, target, callCount]) => [mode, target, callCount])).toEqual([
      ['sequential', 'direct', '20'],
      ['sequential', 'pipe', '20'],
      ['sequential', 'broker', '20'],
      ['10 in flight', 'direct', '40'],
      ['10 in flight', 'pipe', '40'],
      ['10 in flight', 'broker', '40'],
    ]);
    for (const row of modern) expect(Number(row[3])).toBeGreaterThan(0); // calls/s
    const brokerCpuColumn = 7; // mode, target, calls, calls/s, p50, p99, example-modern, broker
    for (const row of modern.filter(([, target]) => target === 'broker'))
      expect(row[brokerCpuColumn]).toMatch(/^\d+\.\d\d$/);
    expect(stdout.slice(stdout.indexOf(modernHeading))).toMatch(
      /÷ direct throughput, 10 in flight \| \d+\.\d\d× \| \d+\.\d\d×/,
    );

    const fanout = tableAfter(stdout, '### Fan-out');
    expect(fanout.map(([streams, triggers, delivered]) => [streams, triggers, delivered])).toEqual([
      ['20', '1', '20 / 20'],
    ]);

    const memory = tableAfter(stdout, '### Memory');
    expect(memory).toHaveLength(1);
    expect(memory[0][0]).toBe('20');
    expect(memory[0][6]).toBe('20'); // DELETE answered 204 for every session

    const elicitation = tableAfter(stdout, '### Elicitation round trip');
    expect(elicitation.map(([target, roundTrips]) => [target, roundTrips])).toEqual([
      ['direct', '4'],
      ['broker', '4'],
    ]);
    const permissions = tableAfter(stdout, '### Permissions');
    expect(permissions.map(([mode, target, callCount]) => [mode, target, callCount])).toEqual([
      ['sequential', 'alice (conditional policy)', '20'],
      ['sequential', 'carol (allows everything)', '20'],
      ['10 in flight', 'alice (conditional policy)', '40'],
      ['10 in flight', 'carol (allows everything)', '40'],
    ]);
    // The decision cache: a handful of permission calls for the whole run, never one per call.
    const perThousand =
      /permission-service calls per 1,000 tool calls \| ([\d.]+) \((\d+) calls/.exec(stdout);
    expect(perThousand).not.toBeNull();
    expect(Number(perThousand![2])).toBeLessThan(10); // one per call would be 120

    // Telemetry and rate limits on vs all off: every call of both backends completed, and the
    // observed backend's own /metrics counted its calls (a limit that refused one would fail it).
    const telemetry = tableAfter(stdout, '### Telemetry and rate limits');
    expect(telemetry.map(([mode, target, callCount]) => [mode, target, callCount])).toEqual([
      ['sequential', 'all off', '20'],
      ['sequential', 'metrics + traces + limit', '20'],
      ['10 in flight', 'all off', '40'],
      ['10 in flight', 'metrics + traces + limit', '40'],
    ]);
    expect(stdout).toMatch(
      /throughput metrics \+ traces \+ limit ÷ all off, 10 in flight \| \d+\.\d{3}×/,
    );
    const counted = /\/metrics counted (\d+) tools\/call requests/.exec(stdout);
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(60 + 5); // the run's calls and warm-up
    // Identity (spec §11): the same whoami server in broker mode and with alice's exchanged
    // token, which is exchanged once (during warm-up) and then served from the broker's cache.
    const identity = tableAfter(stdout, '### Identity');
    expect(identity.map(([mode, target, callCount]) => [mode, target, callCount])).toEqual([
      ['sequential', 'broker mode (static token)', '20'],
      ['sequential', 'tokenExchange (cache hit)', '20'],
      ['10 in flight', 'broker mode (static token)', '40'],
      ['10 in flight', 'tokenExchange (cache hit)', '40'],
    ]);
    expect(stdout).toContain('Token exchanges during the measured calls: 0');
    expect(stdout).toMatch(
      /broker CPU per call, tokenExchange ÷ broker mode, 10 in flight \| \d+\.\d\d×/,
    );

    // The profile section: every busy sample counted once, so the components' shares add up.
    const components = tableAfter(stdout, '#### By component');
    expect(components.length).toBeGreaterThan(0);
    const shares = components.map(([, share]) => Number(share.replace(' %', '')));
    const total = shares.reduce((sum, share) => sum + share, 0);
    expect(Math.abs(total - 100)).toBeLessThanOrEqual(0.05 * shares.length + 0.01); // rounding
    expect(tableAfter(stdout, '#### By package').length).toBeGreaterThan(0);
    // ~45 s alone (two backends); the limit leaves room for a machine busy with the rest of the
    // suite.
  }, 240_000);
});
