/*
 * The bounded run of the MCP endpoint's fuzzer (__testUtils__/mcpFuzz.ts) on one real backend
 * process with both example servers behind the broker (2025-11-25 and 2026-07-28): a fixed seed
 * and a run count that keep the run short on a 2-core machine. The long run, with a seed and a
 * count of your choice: `node bench/fuzz.mjs --target mcp --seed <n> --runs <n>`.
 */
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { fuzzMcpEndpoint, McpFuzzTarget, prepareMcpFuzzTarget } from './__testUtils__/mcpFuzz';
import { startRawMcpSession } from '../testing/rawMcpSession';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';

/** Fixed: a failure names its seed and path, and reruns the same requests. */
const SEED = 20261128;
const RUNS = 600;

describe('the MCP endpoint under generated requests (both eras)', () => {
  let fleet: ExampleFleet;
  let backend: BackendProcess;
  let target: McpFuzzTarget;

  beforeAll(async () => {
    fleet = await startExampleFleet();
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: fleet.servers } },
      startTimeoutMs: 280_000,
    });
    target = await prepareMcpFuzzTarget(backend);
  }, 320_000);

  afterAll(async () => {
    await backend?.stop();
    await fleet?.close();
  }, 60_000);

  it("answers every request without a 5xx, well-formed, and without another person's data", async () => {
    // The fuzzer sees the echo tools, so valid tool calls are among the generated requests.
    expect(target.quickTools.length).toBeGreaterThan(0);
    await fuzzMcpEndpoint(target, { seed: SEED, numRuns: RUNS });
    // And the process is still up and serving sessions.
    const after = await startRawMcpSession(`${backend.baseUrl}/api/mcp-broker/mcp`, target.token);
    expect((await after.request('tools/list', {})).status).toBe(200);
  }, 180_000);
});
