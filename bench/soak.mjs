#!/usr/bin/env node
/*
 * Soak: mixed portal and broker traffic at a steady rate on two replicas of the development
 * backend, for half an hour, watching what grows. Both replicas run on a PostgreSQL server of
 * the benchmark's own (max_connections = 100, the connection budget of
 * app-config.production.yaml) with the broker's session store in it, and the example MCP server
 * behind the broker.
 *
 *   node bench/soak.mjs                          # 30 minutes (plus about a minute of start-up)
 *   node bench/soak.mjs --smoke                  # 2 minutes (what `yarn test` runs)
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
 * traffic and again 40 s after it (keep-alive sockets and idle pool connections closed) must
 * match within 3.
 * Markdown tables go to stdout, progress to stderr, SVG plots to --out (a temporary directory
 * unless given). Exits 0 when the run completed, whatever the verdicts (they are in the
 * tables); 1 when it could not run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { lineChartSvg } from './lib/svgChart.mjs';
import { machineFacts, loadAverage } from './lib/machine.mjs';
import { ms, summarize } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('../packages/backend/src/testing/startBackendProcess.ts');
const { startPostgresServer } = require('../packages/backend/src/testing/postgresServer.ts');
const { productionKnexConfig } = require('../packages/backend/src/testing/productionKnexConfig.ts');
const { connectionObject } = require('../packages/backend/src/testing/backendDatabases.ts');
const {
  createPublishedProduct,
  portalCall,
} = require('../packages/backend/src/testing/portalHttp.ts');
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
const durationMs = Number(options.minutes ?? (smoke ? 2 : 30)) * 60_000;
const rate = Number(options.rate ?? (smoke ? 5 : 10));
const maxInFlight = Number(options['max-in-flight']);
const probeMs = Number(options['probe-seconds'] ?? (smoke ? 2 : 10)) * 1000;
const outDir = options.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'soak-'));
const WARM_UP_SHARE = 0.2;
const WINDOW_SHARE = 0.1;
const GROWTH_LIMIT = 0.05;
const COUNT_SLACK = 3;
const NS = 'toystore';

function log(message) {
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const median = values => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) / 2)];
};

/** The operations, with their weights (out of 100). */
function operations(env) {
  const { replicas, tokens, product, sessions } = env;
  const mcpUrl = replica => `${replica.baseUrl}/api/mcp-broker/mcp`;
  const reads = [
    ['alice', '/apiproducts'],
    ['alice', '/requests/my'],
    ['bob', '/requests'],
    ['carol', '/planpolicies'],
  ];
  const expect = (condition, what) => {
    if (!condition) throw new Error(what);
  };
  return [
    {
      kind: 'portal read',
      weight: 40,
      async run(n) {
        const [user, route] = reads[n % reads.length];
        const answer = await portalCall(replicas[n % 2], 'GET', route, { token: tokens[user] });
        expect(answer.status === 200, `GET ${route} answered ${answer.status}`);
      },
    },
    {
      kind: 'portal key cycle',
      weight: 10,
      async run(n) {
        const [a, b] = n % 2 === 0 ? replicas : [...replicas].reverse();
        const created = await portalCall(a, 'POST', '/requests', {
          token: tokens.alice,
          body: { apiProductRef: { namespace: NS, name: product }, planTier: 'gold' },
        });
        expect(created.status === 201, `POST /requests answered ${created.status}`);
        const name = created.body.metadata.name;
        const secret = await portalCall(b, 'GET', `/apikeys/${NS}/${name}/secret`, {
          token: tokens.alice,
        });
        expect(secret.status === 200, `the secret read answered ${secret.status}`);
        const deleted = await portalCall(a, 'DELETE', `/requests/${NS}/${name}`, {
          token: tokens.alice,
        });
        expect(deleted.status === 204, `DELETE answered ${deleted.status}`);
      },
    },
    {
      kind: 'mcp echo',
      weight: 35,
      async run(n) {
        const session = sessions[n % sessions.length].at(mcpUrl(replicas[n % 2]));
        const message = `soak ${n}`;
        const answer = await session.request('tools/call', {
          name: 'example_echo',
          arguments: { message },
        });
        const text = answer.response?.result?.content?.[0]?.text;
        expect(answer.status === 200 && text === message, `echo answered ${answer.status}`);
      },
    },
    {
      kind: 'mcp progress',
      weight: 5,
      async run(n) {
        const session = sessions[n % sessions.length].at(mcpUrl(replicas[(n + 1) % 2]));
        const answer = await session.request('tools/call', {
          name: 'example_count',
          arguments: { steps: 3, delayMs: 20 },
          _meta: { progressToken: `soak-${n}` },
        });
        const text = answer.response?.result?.content?.[0]?.text;
        expect(answer.status === 200 && text === 'counted to 3', `count answered ${answer.status}`);
      },
    },
    {
      kind: 'mcp session churn',
      weight: 10,
      async run(n) {
        const session = await startRawMcpSession(mcpUrl(replicas[n % 2]), tokens.carol);
        const other = session.at(mcpUrl(replicas[(n + 1) % 2]));
        const listed = await other.request('tools/list', {});
        expect(listed.status === 200, `tools/list answered ${listed.status}`);
        const ended = await session.end();
        expect(ended.status === 204, `DELETE answered ${ended.status}`);
      },
    },
  ];
}

/** Picks operation kinds by weight, deterministically (the n-th operation's kind). */
function scheduleOf(ops) {
  const slots = ops.flatMap(op => Array(op.weight).fill(op));
  // Spread the kinds over the cycle instead of running them in blocks.
  const spread = slots.map((op, i) => ({ op, key: (i * 37) % slots.length }));
  spread.sort((x, y) => x.key - y.key);
  return spread.map(s => s.op);
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

/** How long to wait after the traffic for idle sockets and pool connections to close. */
const IDLE_SETTLE_MS = 40_000;

/** Open descriptors of each replica (from /proc) and the plugins' PostgreSQL connections. */
async function idleFigures(replicas, postgres) {
  return {
    fds: replicas.map(replica => fs.readdirSync(`/proc/${replica.pid}/fd`).length),
    connections: await countDatabaseConnections(postgres.connectionString),
  };
}

function readProbe(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(line => line !== '')
    .map(line => JSON.parse(line));
}

/** Median of `value` over the first window after warm-up and over the last window. */
function firstAndLast(samples, value, startedAt) {
  const at = fraction => startedAt + fraction * durationMs;
  const inWindow = (from, to) => samples.filter(s => s.t >= at(from) && s.t <= at(to)).map(value);
  return {
    first: median(inWindow(WARM_UP_SHARE, WARM_UP_SHARE + WINDOW_SHARE)),
    last: median(inWindow(1 - WINDOW_SHARE, 1.01)),
  };
}

function growth({ first, last }) {
  return (last - first) / first;
}

const percent = value => (Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : '–');

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
    const config = {
      backend: {
        database: {
          client: 'pg',
          connection: connectionObject(postgres.connectionString),
          knexConfig: productionKnexConfig(),
        },
      },
      mcpBroker: { sessionStore: 'database', servers: [{ name: 'example', url: example.url }] },
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
    await createPublishedProduct(replicas[0], tokens.carol, product, 'automatic');
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

    const ops = operations({ replicas, tokens, product, sessions });
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
    // Idle again: keep-alive sockets (5 s) and idle pool connections (30 s) have closed.
    log(`waiting ${IDLE_SETTLE_MS / 1000} s for idle connections to close`);
    await new Promise(resolve => setTimeout(resolve, IDLE_SETTLE_MS));
    const idleAfter = await idleFigures(replicas, postgres);
    log(`idle after: ${JSON.stringify(idleAfter)}`);

    // Tables.
    const lines = [];
    const facts = machineFacts();
    lines.push(
      `### Soak run (${smoke ? 'smoke, ' : ''}${Math.round(durationMs / 60_000)} min)`,
      '',
    );
    lines.push('| setting | value |', '| --- | --- |');
    lines.push(`| duration | ${((finishedAt - startedAt) / 60_000).toFixed(1)} min |`);
    lines.push(`| rate | ${rate} operations/s (open loop, at most ${maxInFlight} in flight) |`);
    lines.push(
      `| replicas | 2 development backends, PostgreSQL max_connections 100, production knexConfig |`,
    );
    lines.push(
      `| machine | ${facts.nproc} cores, ${facts.memoryGiB} GiB, ${facts.cpuModel}, Node ${facts.node}; load at the end ${loadAverage()} |`,
    );
    lines.push(
      `| warm-up / windows | first ${WARM_UP_SHARE * 100} % ignored; first and last ${WINDOW_SHARE * 100} % compared |`,
    );
    lines.push('');
    lines.push('### Soak operations', '');
    lines.push(
      '| operation | count | errors | p50 ms | p99 ms | max ms |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    let totalErrors = 0;
    for (const op of ops) {
      const { latencies, errors } = results.get(op.kind);
      totalErrors += errors.length;
      const s = summarize(latencies);
      lines.push(
        `| ${op.kind} | ${latencies.length + errors.length} | ${errors.length} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} |`,
      );
    }
    lines.push(`| skipped (${maxInFlight} in flight) | ${skipped} | | | | |`);
    lines.push('');
    lines.push('### Soak growth after warm-up (median of the first window → of the last)', '');
    lines.push('| measure | first | last | growth | verdict |', '| --- | --- | --- | --- | --- |');
    const verdicts = [];
    const row = (name, fl, unit, countLike) => {
      const g = growth(fl);
      const ok = countLike
        ? fl.last <= fl.first * (1 + GROWTH_LIMIT) || fl.last - fl.first <= COUNT_SLACK
        : g < GROWTH_LIMIT;
      verdicts.push(ok);
      const fmt = v => (Number.isFinite(v) ? `${v.toFixed(unit === 'MiB' ? 1 : 2)} ${unit}` : '–');
      lines.push(
        `| ${name} | ${fmt(fl.first)} | ${fmt(fl.last)} | ${percent(g)} | ${ok ? 'flat' : 'GROWS'} |`,
      );
    };
    probes.forEach((samples, i) => {
      row(
        `replica ${i} RSS`,
        firstAndLast(samples, s => s.rssBytes / 2 ** 20, startedAt),
        'MiB',
      );
      row(
        `replica ${i} heap used`,
        firstAndLast(samples, s => s.heapUsedBytes / 2 ** 20, startedAt),
        'MiB',
      );
      row(
        `replica ${i} event-loop delay p99`,
        firstAndLast(samples, s => s.loopDelayMs.p99, startedAt),
        'ms',
      );
      row(
        `replica ${i} open descriptors`,
        firstAndLast(samples, s => s.fds, startedAt),
        '',
        true,
      );
    });
    row(
      'PostgreSQL connections (both replicas)',
      firstAndLast(connections, s => s.n, startedAt),
      '',
      true,
    );
    lines.push('');
    lines.push(
      `### Soak leaks: idle before the traffic → idle ${IDLE_SETTLE_MS / 1000} s after it`,
      '',
      '| measure | before | after | verdict |',
      '| --- | --- | --- | --- |',
    );
    const leakRow = (name, before, after) => {
      const ok = after - before <= COUNT_SLACK;
      verdicts.push(ok);
      lines.push(`| ${name} | ${before} | ${after} | ${ok ? 'no leak' : 'LEAKS'} |`);
    };
    replicas.forEach((_, i) =>
      leakRow(`replica ${i} open descriptors`, idleBefore.fds[i], idleAfter.fds[i]),
    );
    leakRow(
      'PostgreSQL connections (both replicas)',
      idleBefore.connections,
      idleAfter.connections,
    );
    lines.push('');
    const maxConnections = Math.max(...connections.map(c => c.n));
    lines.push(
      `Most PostgreSQL connections of the plugins at once: ${maxConnections} (budget: 2 × 23 = 46).`,
    );
    lines.push(`Errors: ${totalErrors} of ${started} operations.`);
    lines.push(
      `Verdict: ${verdicts.every(Boolean) && totalErrors === 0 ? 'FLAT, no errors' : 'NOT FLAT or errors (see above)'}.`,
    );
    for (const op of ops) {
      for (const error of results.get(op.kind).errors.slice(0, 5))
        lines.push(`- ${op.kind}: ${error}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);

    // Plots.
    fs.mkdirSync(outDir, { recursive: true });
    const minutes = t => (t - startedAt) / 60_000;
    const during = samples => samples.filter(s => s.t >= startedAt && s.t <= finishedAt);
    const perReplica = value =>
      probes.map((samples, i) => ({
        name: `replica ${i}`,
        points: during(samples).map(s => [minutes(s.t), value(s)]),
      }));
    const plots = {
      'soak-rss.svg': {
        title: 'RSS of each replica',
        yLabel: 'MiB',
        series: perReplica(s => s.rssBytes / 2 ** 20),
      },
      'soak-loop-delay.svg': {
        title: 'Event-loop delay p99 of each replica (per probe interval)',
        yLabel: 'ms',
        series: perReplica(s => s.loopDelayMs.p99),
      },
      'soak-descriptors.svg': {
        title: 'Open file descriptors of each replica',
        yLabel: 'descriptors',
        series: perReplica(s => s.fds),
      },
      'soak-db-connections.svg': {
        title: 'PostgreSQL connections of the plugins (both replicas)',
        yLabel: 'connections',
        series: [
          { name: 'connections', points: during(connections).map(c => [minutes(c.t), c.n]) },
        ],
      },
    };
    // The raw samples, so that the plots can be drawn again (or differently) without a rerun.
    fs.writeFileSync(
      path.join(outDir, 'soak-samples.json'),
      `${JSON.stringify({ startedAt, finishedAt, probes, connections, idleBefore, idleAfter })}\n`,
    );
    for (const [file, chart] of Object.entries(plots)) {
      fs.writeFileSync(path.join(outDir, file), lineChartSvg({ ...chart, xLabel: 'minutes' }));
    }
    log(`plots in ${outDir}`);
  } finally {
    await stopAll();
  }
}

main().catch(error => {
  process.stderr.write(`soak failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
