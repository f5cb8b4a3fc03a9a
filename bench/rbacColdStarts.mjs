#!/usr/bin/env node
/*
 * Cold starts of the development backend on PostgreSQL with the RBAC plugin as published
 * (docs/deployment.md, "Starting"): does RBAC hold the portal's and the broker's conditional
 * policies after every start? Each start gets fresh databases (a new `backend.database.prefix`:
 * every plugin creates its database and runs its migrations, the slowest start there is), waits
 * until the fixture users sign in with their team, asks RBAC for bob's decisions on
 * `portal.apikey.approve` and `mcp-broker.tool.use` (both conditional for his team's role in
 * examples/rbac-conditional-policies.yaml), stops the backend and drops its databases.
 *
 *   node bench/rbacColdStarts.mjs                       # 20 starts
 *   node bench/rbacColdStarts.mjs --starts 5 --postgres postgresql://postgres:postgres@127.0.0.1:5432
 *   node bench/rbacColdStarts.mjs --hold-routes portal  # force the race: the portal's routes are
 *                                                       # mounted only after a first request for
 *                                                       # them got 404 (testing/lateRouteRegistration.cjs)
 *
 * PostgreSQL: --postgres, else BENCH_POSTGRES_URL, else
 * BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING, else postgres:postgres@127.0.0.1:5432.
 * One line per start on stderr; a Markdown summary on stdout. A start counts as skipped when
 * either decision is not CONDITIONAL or RBAC logged that it skipped a plugin's policies; a start
 * that does not come up at all (within 400 s) is counted apart. Exits 1 when any start skipped,
 * 2 when a start did not come up.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { postgresUrl } from './lib/portalDatabases.mjs';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { markdownTable, summarize } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('../packages/backend/src/testing/startBackendProcess.ts');
const { backendDatabases } = require('../packages/backend/src/testing/backendDatabases.ts');

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '20' },
    postgres: { type: 'string' },
    'hold-routes': { type: 'string' },
  },
});
const starts = Number(values.starts);
if (!Number.isInteger(starts) || starts < 1) throw new Error('--starts takes a positive integer');
process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING = values.postgres ?? postgresUrl();

/** bob's two conditional permissions (one per plugin of ours). */
const BOB_CONDITIONAL = [
  {
    name: 'portal.apikey.approve',
    resourceType: 'portal-apikey',
    attributes: { action: 'update' },
  },
  { name: 'mcp-broker.tool.use', resourceType: 'mcp-broker-tool', attributes: {} },
];

async function bobDecisions(backend) {
  const token = await backend.signIn('bob');
  const response = await fetch(`${backend.baseUrl}/api/permission/authorize`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      items: BOB_CONDITIONAL.map(permission => ({
        id: permission.name,
        permission: { type: 'resource', ...permission },
      })),
    }),
  });
  if (!response.ok) throw new Error(`POST /api/permission/authorize: HTTP ${response.status}`);
  return Object.fromEntries((await response.json()).items.map(item => [item.id, item.result]));
}

/** One cold start: `{ seconds, decisions, skippedLine }`. */
async function coldStart() {
  const database = backendDatabases('rbacColdStarts').find(d => d.name === 'PostgreSQL');
  const hold = values['hold-routes'];
  const started = performance.now();
  try {
    let backend;
    try {
      backend = await startBackendProcess({
        config: { mcpBroker: { servers: [] }, backend: { database: database.config } },
        nodeArgs: hold
          ? ['--require', path.resolve('packages/backend/src/testing/lateRouteRegistration.cjs')]
          : [],
        env: hold ? { LATE_ROUTE_PLUGIN: hold } : {},
        // Every start as `yarn start` makes it: the config schema compiled anew, not kept.
        cachedConfigSchema: false,
        // Generous: on a loaded 2-core machine a cold start on PostgreSQL took up to 3 minutes.
        startTimeoutMs: 400_000,
      });
    } catch (error) {
      // startBackendProcess refuses a start whose log says RBAC skipped a plugin's policies.
      const skipped = /RBAC skipped conditional policies at start \("([^"]*)"/.exec(String(error));
      if (!skipped) throw error;
      return { seconds: (performance.now() - started) / 1000, decisions: {}, skipped: skipped[1] };
    }
    try {
      const seconds = (performance.now() - started) / 1000;
      const decisions = await bobDecisions(backend);
      const notConditional = Object.entries(decisions).filter(([, r]) => r !== 'CONDITIONAL');
      return {
        seconds,
        decisions,
        skipped: notConditional.length ? notConditional.map(e => e.join(' ')).join(', ') : '',
      };
    } finally {
      await backend.stop();
    }
  } finally {
    await database.cleanup();
  }
}

const results = [];
let notStarted = 0;
for (let i = 1; i <= starts; i++) {
  let result;
  try {
    result = await coldStart();
  } catch (error) {
    // Not RBAC's doing (no skip line in the log): reported apart, and the next start runs.
    notStarted += 1;
    process.stderr.write(`start ${i}/${starts}: did not come up: ${error?.stack ?? error}\n`);
    continue;
  }
  results.push(result);
  process.stderr.write(
    `start ${i}/${starts}: ${result.seconds.toFixed(1)} s, ` +
      `${result.skipped ? `SKIPPED (${result.skipped})` : 'both CONDITIONAL'}\n`,
  );
}

const skipped = results.filter(r => r.skipped);
const seconds = summarize(results.map(r => r.seconds));
const machine = machineFacts();
process.stdout.write(
  `## RBAC cold starts on PostgreSQL (${new Date().toISOString()})\n\n` +
    `${machine.nproc} CPUs (${machine.cpuModel}), Node ${machine.node}, ` +
    `load ${loadAverage()} at the end; ` +
    `${values['hold-routes'] ? `routes of ${values['hold-routes']} held back; ` : ''}` +
    `RBAC as published, with the permission module that awaits the named plugins\n\n` +
    markdownTable(
      [
        'starts',
        "bob's decisions not CONDITIONAL",
        'did not come up',
        'start s p50',
        'start s max',
      ],
      [
        [
          results.length + notStarted,
          skipped.length,
          notStarted,
          seconds.p50.toFixed(1),
          seconds.max.toFixed(1),
        ],
      ],
    ) +
    (skipped.length ? `\n\nSkipped:\n${skipped.map(r => `- ${r.skipped}`).join('\n')}\n` : '\n'),
);
process.exit(skipped.length ? 1 : notStarted ? 2 : 0);
