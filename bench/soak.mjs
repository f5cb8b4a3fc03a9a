#!/usr/bin/env node
/*
 * Soak: mixed portal and broker traffic at a steady rate on two replicas of the development
 * backend, for half an hour, watching what grows. Both replicas run on a PostgreSQL server of
 * the benchmark's own (max_connections = 100, the connection budget of
 * app-config.production.yaml) with the broker's session store in it, and the example MCP server
 * behind the broker.
 *
 *   node bench/soak.mjs                          # 30 minutes (plus about a minute of start-up)
 *   node bench/soak.mjs --smoke                  # 1 minute (what `yarn test` runs)
 *   node bench/soak.mjs --minutes 30 --rate 10 --out docs/soak   # writes the SVG plots there
 *
 * Traffic (open loop: an operation starts every 1/rate s whatever the others do, at most
 * --max-in-flight at once), alternating between the replicas:
 *   40 % portal reads (products, my requests, all requests, plan policies; alice, bob, carol)
 *   10 % portal key cycles: alice requests a key (automatic approval), reads its secret once,
 *        deletes it
 *   35 % MCP `tools/call echo` on one of 8 long-lived sessions
 *    5 % MCP `tools/call count` (3 progress notifications)
 *   10 % MCP session churn: initialize, tools/list, DELETE
 * Every answer other than the expected one is an error (a 503 too).
 *
 * Measured: each backend process runs bench/lib/processProbe.cjs (preloaded), which writes
 * every --probe-seconds its RSS, heap, open file descriptors and event-loop delay (p50, p99,
 * max over the interval); this script also counts the PostgreSQL connections of the plugins.
 * After a warm-up (the first 20 % of the run), the first and the last tenth of the run are
 * compared: RSS, event-loop delay p99, descriptors and database connections must not grow by
 * 5 % or more (descriptors and connections: nor by more than 3), and no operation may fail.
 * Leaks are judged at rest: the descriptors and database connections while idle before the
 * traffic and again once idle after it must match within 3. "Once idle" is the first reading,
 * taken every second after the traffic, that matches; keep-alive sockets (5 s) and idle pool
 * connections (30 s) take time to close, so a leak shows as no match within 60 s.
 * Markdown tables go to stdout, progress to stderr, SVG plots to --out (a temporary directory
 * unless given). Exits 0 when the run completed, whatever the verdicts (they are in the
 * tables); 1 when it could not run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadAverage } from './lib/machine.mjs';
import { idleFiguresMatch, readProbe, soakTables, writeSoakPlots } from './lib/soakReport.mjs';
import { scheduleOf, soakOperations } from './lib/soakTraffic.mjs';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('../packages/backend/src/testing/startBackendProcess.ts');
const { startPostgresServer } = require('../packages/backend/src/testing/postgresServer.ts');
const { productionKnexConfig } = require('../packages/backend/src/testing/productionKnexConfig.ts');
const { connectionObject } = require('../packages/backend/src/testing/backendDatabases.ts');
const { createPublishedProduct } = require('../packages/backend/src/testing/portalHttp.ts');
const { startRawMcpSession } = require('../packages/backend/src/testing/rawMcpSession.ts');
const { startExampleMcpServer } = require('../packages/example-mcp-server/src/index.ts');
const { Client: PgClient } = require('pg');

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: options } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    minutes: { type: 'string' },
    rate: { type: 'string' },
    'max-in-flight': { type: 'string', default: '50' },
    'probe-seconds': { type: 'string' },
    out: { type: 'string' },
  },
});
const smoke = options.smoke;
const durationMs = Number(options.minutes ?? (smoke ? 1 : 30)) * 60_000;
const rate = Number(options.rate ?? (smoke ? 5 : 10));
const maxInFlight = Number(options['max-in-flight']);
const probeMs = Number(options['probe-seconds'] ?? (smoke ? 2 : 10)) * 1000;
const outDir = options.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'soak-'));

function log(message) {
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function countDatabaseConnections(connectionString) {
  const client = new PgClient({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname LIKE 'backstage_plugin_%'",
    );
    return rows[0].n;
  } finally {
    await client.end();
  }
}

/** How long to wait at most after the traffic for idle sockets and pool connections to close. */
const IDLE_SETTLE_MAX_MS = 60_000;

/** Open descriptors of each replica (from /proc) and the plugins' PostgreSQL connections. */
async function idleFigures(replicas, postgres) {
  return {
    fds: replicas.map(replica => fs.readdirSync(`/proc/${replica.pid}/fd`).length),
    connections: await countDatabaseConnections(postgres.connectionString),
  };
}

async function main() {
  log(`${smoke ? 'smoke ' : ''}soak: ${durationMs / 60_000} min at ${rate} operations/s`);
  const stoppers = [];
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => stopAll().finally(() => process.exit(130)));
  }
  try {
    const postgres = await startPostgresServer({ maxConnections: 100 });
    stoppers.push(() => postgres.destroy());
    const example = await startExampleMcpServer({ port: 0 });
    stoppers.push(() => example.close());
    const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'soak-probe-'));
    stoppers.push(async () => fs.rmSync(probeDir, { recursive: true, force: true }));
    const credentialEncryptionKey = randomBytes(32).toString('base64');
    const config = {
      backend: {
        database: {
          client: 'pg',
          connection: connectionObject(postgres.connectionString),
          knexConfig: productionKnexConfig(),
        },
      },
      mcpBroker: {
        sessionStore: 'database',
        // Required with the database session store: both replicas seal the shared signing and
        // requestState keys with it, so they get the same one.
        credentialEncryptionKey,
        servers: [{ name: 'example', url: example.url }],
        // The development config's demonstration limit (example `count`: 20 calls per person
        // per day) is lifted: the soak measures errors and growth under steady traffic, and its
        // `count` calls would otherwise be refused with 429 after the 20th.
        rateLimits: { overrides: [] },
      },
    };
    const replicas = [];
    for (let i = 0; i < 2; i++) {
      const replica = await startBackendProcess({
        config,
        nodeArgs: ['--require', path.join(here, 'lib', 'processProbe.cjs')],
        env: {
          SOAK_PROBE_FILE: path.join(probeDir, `replica-${i}.jsonl`),
          SOAK_PROBE_INTERVAL_MS: String(probeMs),
        },
        startTimeoutMs: 180_000,
      });
      stoppers.push(() => replica.stop());
      replicas.push(replica);
      log(`replica ${i} up on port ${replica.port}`);
    }
    const tokens = {};
    for (const user of ['alice', 'bob', 'carol']) tokens[user] = await replicas[0].signIn(user);
    const product = `soak-${Date.now().toString(36)}`;
    await createPublishedProduct(replicas[0], tokens.carol, product, { approvalMode: 'automatic' });
    // Both replicas list the example server before the clock starts.
    for (const replica of replicas) {
      const session = await startRawMcpSession(
        `${replica.baseUrl}/api/mcp-broker/mcp`,
        tokens.carol,
      );
      for (let attempt = 0; ; attempt++) {
        const listed = await session.request('tools/list', {});
        if (listed.response?.result?.tools?.some(t => t.name === 'example_echo')) break;
        if (attempt > 200) throw new Error('the broker did not list the example server');
        await new Promise(resolve => setTimeout(resolve, 100));
      }
    }
    const sessions = [];
    for (let i = 0; i < 8; i++) {
      sessions.push(
        await startRawMcpSession(`${replicas[i % 2].baseUrl}/api/mcp-broker/mcp`, tokens.carol),
      );
    }

    const idleBefore = await idleFigures(replicas, postgres);
    log(`idle before: ${JSON.stringify(idleBefore)}`);

    const ops = soakOperations({ replicas, tokens, product, sessions });
    const schedule = scheduleOf(ops);
    const results = new Map(ops.map(op => [op.kind, { latencies: [], errors: [] }]));
    const connections = [];
    let inFlight = 0;
    let skipped = 0;
    let started = 0;
    const running = new Set();
    const startedAt = Date.now();
    const endAt = startedAt + durationMs;
    log('traffic started');
    const connectionTimer = setInterval(() => {
      countDatabaseConnections(postgres.connectionString).then(
        n => connections.push({ t: Date.now(), n }),
        error => log(`could not count connections: ${error.message}`),
      );
    }, probeMs);
    let nextReport = startedAt + 60_000;
    for (let n = 0; Date.now() < endAt; n++) {
      const due = startedAt + (n * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait));
      if (inFlight >= maxInFlight) {
        skipped += 1;
        continue;
      }
      const op = schedule[n % schedule.length];
      inFlight += 1;
      started += 1;
      const t0 = performance.now();
      const run = op
        .run(n)
        .then(
          () => results.get(op.kind).latencies.push(performance.now() - t0),
          error =>
            results.get(op.kind).errors.push(`${Date.now() - startedAt} ms: ${error.message}`),
        )
        .finally(() => {
          inFlight -= 1;
          running.delete(run);
        });
      running.add(run);
      if (Date.now() >= nextReport) {
        nextReport += 60_000;
        const errors = [...results.values()].reduce((sum, r) => sum + r.errors.length, 0);
        log(
          `${Math.round((Date.now() - startedAt) / 60_000)} min: ${started} started, ${errors} errors, load ${loadAverage()}`,
        );
      }
    }
    await Promise.all([...running]);
    clearInterval(connectionTimer);
    const finishedAt = Date.now();
    log('traffic done; reading the probes');
    const probes = replicas.map((_, i) => readProbe(path.join(probeDir, `replica-${i}.jsonl`)));
    // Idle again once keep-alive sockets (5 s) and idle pool connections (30 s) have closed:
    // read every second until the figures match those before the traffic, or the time is up.
    log(`waiting up to ${IDLE_SETTLE_MAX_MS / 1000} s for idle connections to close`);
    const settleStarted = Date.now();
    let idleAfter = await idleFigures(replicas, postgres);
    while (
      !idleFiguresMatch(idleBefore, idleAfter) &&
      Date.now() - settleStarted < IDLE_SETTLE_MAX_MS
    ) {
      await new Promise(resolve => setTimeout(resolve, 1000));
      idleAfter = await idleFigures(replicas, postgres);
    }
    const idleSettleMs = Date.now() - settleStarted;
    log(`idle after ${Math.round(idleSettleMs / 1000)} s: ${JSON.stringify(idleAfter)}`);

    const run = {
      smoke,
      durationMs,
      rate,
      maxInFlight,
      startedAt,
      finishedAt,
      ops,
      results,
      skipped,
      started,
      probes,
      connections,
      idleBefore,
      idleAfter,
      idleSettleMs,
      budget: '2 × 23 = 46',
    };
    process.stdout.write(`${soakTables(run).join('\n')}\n`);
    writeSoakPlots(run, outDir);
    log(`plots in ${outDir}`);
  } finally {
    await stopAll();
  }
}

main().catch(error => {
  process.stderr.write(`soak failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
