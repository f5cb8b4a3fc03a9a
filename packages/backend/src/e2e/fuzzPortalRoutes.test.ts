/*
 * The bounded run of the portal's fuzzer (__testUtils__/portalFuzz.ts) over every route of
 * `portalOperations`, on one real backend process: a fixed seed and a run count that keep the
 * run short on a 2-core machine. The long run, with a seed and a count of your choice:
 * `node bench/fuzz.mjs --target portal --seed <n> --runs <n>`.
 */
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { fuzzPortalRoutes, preparePortalFuzzTarget } from './__testUtils__/portalFuzz';

/** Fixed: a failure names its seed and path, and reruns the same requests. */
const SEED = 20261128;
const RUNS = 150;

describe('the portal routes under generated requests', () => {
  let backend: BackendProcess;

  beforeAll(async () => {
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: [] } },
      startTimeoutMs: 280_000,
    });
  }, 320_000);

  afterAll(async () => {
    await backend?.stop();
  }, 60_000);

  it("answers every request without a 5xx, with Backstage's error bodies, and without another person's data", async () => {
    const { target, foreignRequestUnchanged } = await preparePortalFuzzTarget(backend);
    await fuzzPortalRoutes(target, { seed: SEED, numRuns: RUNS });
    // Nothing the fuzzing user sent changed another person's request, and the process is up.
    expect(await foreignRequestUnchanged()).toBe(true);
  }, 180_000);
});
