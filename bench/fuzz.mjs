#!/usr/bin/env node
/*
 * The long run of the property-based fuzzers (packages/backend/src/e2e/__testUtils__/): generated
 * requests to the broker's MCP endpoint in both eras (mcpFuzz.ts) and to every portal route
 * (portalFuzz.ts) on one real development backend, with both example MCP servers behind the
 * broker. The same properties as the bounded runs in `yarn test` (never a 5xx, never a hang or a
 * dropped connection, well-formed answers, never another person's data), with the seed and the
 * number of requests of your choice:
 *
 *   node bench/fuzz.mjs                                   # both, seed from the clock, 2000 each
 *   node bench/fuzz.mjs --target mcp --seed 42 --runs 20000
 *   node bench/fuzz.mjs --target portal --seed 42 --runs 5000
 *
 * Prints the seed first, so that a failure can be rerun with it; fast-check's report names the
 * failing request. Exits 0 when every property held, 1 on a failure, 2 when it could not run.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('../packages/backend/src/testing/startBackendProcess.ts');
const { startExampleFleet } = require('../packages/backend/src/e2e/__testUtils__/exampleFleet.ts');
const {
  fuzzMcpEndpoint,
  prepareMcpFuzzTarget,
} = require('../packages/backend/src/e2e/__testUtils__/mcpFuzz.ts');
const {
  fuzzPortalRoutes,
  preparePortalFuzzTarget,
} = require('../packages/backend/src/e2e/__testUtils__/portalFuzz.ts');

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'both' },
    seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
    runs: { type: 'string', default: '2000' },
  },
});
const seed = Number(values.seed);
const numRuns = Number(values.runs);
if (!['mcp', 'portal', 'both'].includes(values.target)) {
  throw new Error('--target takes mcp, portal or both');
}
if (!Number.isInteger(seed) || !Number.isInteger(numRuns) || numRuns < 1) {
  throw new Error('--seed and --runs take integers (--runs at least 1)');
}
process.stderr.write(`fuzz: target ${values.target}, seed ${seed}, ${numRuns} requests each\n`);

let fleet;
let backend;
let failed = false;
try {
  fleet = await startExampleFleet();
  backend = await startBackendProcess({
    config: { mcpBroker: { servers: fleet.servers } },
    startTimeoutMs: 240_000,
  });
  for (const target of values.target === 'both' ? ['mcp', 'portal'] : [values.target]) {
    const started = performance.now();
    try {
      if (target === 'mcp') {
        await fuzzMcpEndpoint(await prepareMcpFuzzTarget(backend), { seed, numRuns });
      } else {
        const portal = await preparePortalFuzzTarget(backend);
        await fuzzPortalRoutes(portal.target, { seed, numRuns });
        if (!(await portal.foreignRequestUnchanged())) {
          throw new Error("another person's key request changed during the run");
        }
      }
      process.stdout.write(
        `${target}: ${numRuns} requests, seed ${seed}: every property held ` +
          `(${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    } catch (error) {
      failed = true;
      process.stdout.write(`${target}: FAILED (seed ${seed})\n${error?.message ?? error}\n`);
    }
  }
} catch (error) {
  process.stderr.write(`fuzz: could not run: ${error?.stack ?? error}\n`);
  process.exitCode = 2;
} finally {
  await backend?.stop();
  await fleet?.close();
}
if (process.exitCode !== 2) process.exitCode = failed ? 1 : 0;
