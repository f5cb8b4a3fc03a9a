#!/usr/bin/env node
/*
 * An elicitation answered on the replica that owns the call vs through the other replica
 * (issue #37: "within 10 ms p50 of the same answer on the owning replica, PostgreSQL"), with the
 * replicas woken by PostgreSQL LISTEN/NOTIFY and with polling only, side by side in one run.
 *
 * Four real development backends (packages/backend through startBackendProcess) on one
 * PostgreSQL database prefix with `mcpBroker.sessionStore: database`: A1 and B1 with
 * `signalNotifications: true` (the default), A2 and B2 with `signalNotifications: false` (they
 * only poll). Behind them the repository's modern example MCP server (2026-07-28, SDK v2), whose
 * `confirm` tool asks for input (`input_required`). A 2025-11-25 client over raw HTTP (an SDK
 * client would add its own cost) opens a session on A, calls `modern_confirm` on A, and when
 * the broker's `elicitation/create` arrives on the call's stream it POSTs the answer either to
 * A itself (the owning replica: the waiting call takes it in memory) or to B (the answer becomes
 * an `answer` signal to the call on the bus between replicas, and A must learn of it). Timed:
 * from the answer's POST being sent to the call's result arriving on A's stream. The client is
 * packages/backend/src/testing/rawMcpSession.ts (as the multi-replica tests use it).
 *
 * Rounds interleave the four cases (A1←A1, A1←B1, A2←A2, A2←B2), so the machine's load falls
 * on all alike. Then the bus alone (`--only bus`): two SignalBuses in this process on a broker
 * database, one signalling a call the other waits for, with and without notifications. Prints
 * Markdown tables and the ratios. Options: --rounds N (default 200), --smoke (5 rounds),
 * --only answers,bus (default both). PostgreSQL: BENCH_POSTGRES_URL, else
 * BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING, else postgresql://postgres:postgres@
 * 127.0.0.1:5432; the databases with the run's prefix are dropped afterwards.
 *
 *   node bench/replicaAnswers.mjs [--rounds 200] [--smoke]
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { startExampleServer, waitForBrokerBackends } from './lib/brokerProcesses.mjs';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { createBenchDatabase } from './lib/portalDatabases.mjs';
import { processStoppers } from './lib/processStoppers.mjs';
import { percentile } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('../packages/backend/src/testing/startBackendProcess.ts');
const {
  sseMessages,
  startRawMcpSession,
} = require('../packages/backend/src/testing/rawMcpSession.ts');

const knexFactory = require('knex');
const pg = require('pg');
const {
  SignalBus,
  callAddress,
} = require('../plugins/mcp-broker-backend/src/replicas/SignalBus.ts');
const {
  DatabaseSignalStore,
} = require('../plugins/mcp-broker-backend/src/store/DatabaseSignalStore.ts');
const { migrateBrokerDatabase } = require('../plugins/mcp-broker-backend/src/store/migrations.ts');

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    only: { type: 'string', default: 'answers,bus' },
  },
});
const ONLY = new Set(args.only.split(','));
const ROUNDS = args.smoke ? 5 : Number(args.rounds ?? 200);
const WARMUP = args.smoke ? 1 : 10;
const log = message => process.stderr.write(`[replica answers] ${message}\n`);

/**
 * One round trip: `modern_confirm` called in `session` (on the owning replica), its elicitation
 * answered through `answering` (the same session on the answering replica); resolves the ms from
 * sending the answer to the call's result.
 */
async function answerRoundTrip({ session, answering, callId }) {
  const response = await session.post({
    jsonrpc: '2.0',
    id: callId,
    method: 'tools/call',
    params: { name: 'modern_confirm', arguments: { message: 'Go ahead?' } },
  });
  if (response.status !== 200) throw new Error(`tools/call answered ${response.status}`);
  return new Promise((resolve, reject) => {
    let answeredAt;
    let settled = false;
    const stream = sseMessages(response, message => {
      if (message.method === 'elicitation/create') {
        answeredAt = performance.now();
        answering
          .post({
            jsonrpc: '2.0',
            id: message.id,
            result: { action: 'accept', content: { confirmed: true } },
          })
          .then(async answer => {
            await answer.arrayBuffer();
            if (answer.status !== 202) reject(new Error(`the answer got ${answer.status}`));
          })
          .catch(reject);
      } else if (message.id === callId) {
        const ms = performance.now() - answeredAt;
        settled = true;
        if (message.error !== undefined || answeredAt === undefined) {
          reject(new Error(`the call ended with ${JSON.stringify(message).slice(0, 300)}`));
        } else resolve(ms);
      }
    });
    stream.done.then(() => {
      if (!settled) reject(new Error("the call's stream ended without its result"));
    });
  });
}

const fmt = ms => ms.toFixed(2);

function describeMachine() {
  const facts = machineFacts();
  return `${facts.nproc} cores (${facts.cpuModel}), Node ${facts.node}`;
}

/** The round trips through four replicas (see the file comment); returns the report's lines. */
async function answersSection(database, stoppers) {
  {
    const modern = await startExampleServer('src/modernMain.ts');
    stoppers.push(() => modern.stop());
    // Required with the database session store; the replicas share it.
    const credentialEncryptionKey = randomBytes(32).toString('base64');
    const replicaConfig = signalNotifications => ({
      backend: { database: database.backendConfig },
      mcpBroker: {
        sessionStore: 'database',
        credentialEncryptionKey,
        signalNotifications,
        servers: [{ name: 'modern', url: modern.url }],
      },
    });
    const replicas = {};
    // One after the other: the first creates the plugin databases and runs the migrations.
    for (const [name, notifications] of [
      ['A1', true],
      ['B1', true],
      ['A2', false],
      ['B2', false],
    ]) {
      const replica = await startBackendProcess({
        config: replicaConfig(notifications),
        env: { LOG_LEVEL: 'warn' },
        startTimeoutMs: 300_000,
      });
      stoppers.push(() => replica.stop());
      replicas[name] = replica;
      log(`replica ${name} (signalNotifications: ${notifications}) up on port ${replica.port}`);
    }
    const token = await replicas.A1.signIn('carol');
    for (const replica of Object.values(replicas)) {
      await waitForBrokerBackends(replica, token, ['modern'], 120_000);
    }
    const cases = [
      { mode: 'LISTEN/NOTIFY', answeredOn: 'owning replica', owner: 'A1', answerer: 'A1' },
      { mode: 'LISTEN/NOTIFY', answeredOn: 'other replica', owner: 'A1', answerer: 'B1' },
      { mode: 'polling only', answeredOn: 'owning replica', owner: 'A2', answerer: 'A2' },
      { mode: 'polling only', answeredOn: 'other replica', owner: 'A2', answerer: 'B2' },
    ];
    const mcpUrl = name => `${replicas[name].baseUrl}/api/mcp-broker/mcp`;
    for (const c of cases) {
      c.session = await startRawMcpSession(mcpUrl(c.owner), token);
      c.answering = c.session.at(mcpUrl(c.answerer));
      c.samples = [];
    }
    const loadBefore = loadAverage();
    let callId = 1;
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const c of cases) {
        const ms = await answerRoundTrip({
          session: c.session,
          answering: c.answering,
          callId: callId++,
        });
        if (round >= WARMUP) c.samples.push(ms);
      }
      if ((round + 1) % 50 === 0) log(`${round + 1} rounds`);
    }
    const loadAfter = loadAverage();

    const lines = [
      `\`node bench/replicaAnswers.mjs${args.smoke ? ' --smoke' : ` --rounds ${ROUNDS}`}\`: ` +
        `${ROUNDS} round trips per case (after ${WARMUP} warm-up), interleaved; ms from the ` +
        "answer's POST to the call's result on the owning replica " +
        `(load average ${loadBefore} before, ${loadAfter} after).`,
      '',
      '| signals between replicas | answer POSTed to | round trips | p50 ms | p90 ms | p99 ms | mean ms |',
      '| ------------------------ | ---------------- | ----------- | ------ | ------ | ------ | ------- |',
      ...cases.map(c => `| ${c.mode} | ${c.answeredOn} | ${sampleCells(c)} |`),
    ];
    lines.push(
      '',
      '| signals between replicas | other − owning, p50 | other / owning, p50 | target (≤ 10 ms) |',
    );
    lines.push(
      '| ------------------------ | ------------------- | ------------------- | ---------------- |',
    );
    for (const mode of ['LISTEN/NOTIFY', 'polling only']) {
      const [own, other] = cases.filter(c => c.mode === mode).map(stats);
      const difference = other.p50 - own.p50;
      lines.push(
        `| ${mode} | ${fmt(difference)} ms | ${(other.p50 / own.p50).toFixed(2)}× | ${difference <= 10 ? 'met' : 'missed'} |`,
      );
    }
    return lines;
  }
}

function stats({ samples }) {
  return {
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** A case's count, p50, p90, p99 and mean as Markdown cells. */
function sampleCells(c) {
  const s = stats(c);
  return [c.samples.length, fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.mean)].join(' | ');
}

/** Warnings of the buses on stderr; the rest is quiet. */
const busLogger = {
  warn: message => log(`bus: ${message}`),
  error: message => log(`bus: ${message}`),
  info: () => undefined,
  debug: () => undefined,
  child: () => busLogger,
};

/**
 * The bus alone, in this process: two SignalBuses ("replicas", a knex pool each) on a migrated
 * broker database, one sending an `answer` signal to a call the other waits for (with the 100 ms
 * interval an answer's waiter asks for), with and without notifications, interleaved; ms from
 * the send to the waiter's handler. What the bus adds, without HTTP or a backend.
 */
async function busSection(database) {
  const url = new URL(postgresUrlOf(database));
  const name = `${database.backendConfig.prefix}bus`;
  const admin = new pg.Client({ connectionString: url.href });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`).finally(() => admin.end());
  const connection = { ...database.backendConfig.connection, database: name };
  const pools = [0, 1].map(() =>
    knexFactory({ client: 'pg', connection, pool: { min: 0, max: 2 } }),
  );
  const buses = [];
  try {
    await migrateBrokerDatabase(pools[0]);
    const cases = [true, false].map(notify => {
      const [waiting, sending] = pools.map(knex => {
        const bus = new SignalBus({
          store: new DatabaseSignalStore(knex, { notify }),
          logger: busLogger,
        });
        buses.push(bus);
        return bus;
      });
      return { mode: notify ? 'LISTEN/NOTIFY' : 'polling only', waiting, sending, samples: [] };
    });
    // The listening connection opens when something first waits.
    const opener = cases[0].waiting.watch(callAddress('opener'), () => false);
    while (!cases[0].waiting.listening) await new Promise(resolve => setTimeout(resolve, 20));
    opener();
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const c of cases) {
        const address = callAddress(`bench-${c.mode}-${round}`);
        let unwatch;
        const received = new Promise(resolve => {
          unwatch = c.waiting.watch(
            address,
            () => {
              resolve(performance.now());
              return true;
            },
            100,
          );
        });
        const sentAt = performance.now();
        await c.sending.send({ address, kind: 'answer', payload: '{}' }, 60_000);
        const ms = (await received) - sentAt;
        unwatch();
        if (round >= WARMUP) c.samples.push(ms);
      }
    }
    const lines = [
      '',
      `The bus alone (\`SignalBus\` → PostgreSQL → \`SignalBus\` in the benchmark process, two ` +
        `pools, a 100 ms interval as an answer's waiter; ${ROUNDS} signals per mode, interleaved; ` +
        'ms from the send to the handler):',
      '',
      '| signals between replicas | signals | p50 ms | p90 ms | p99 ms | mean ms |',
      '| ------------------------ | ------- | ------ | ------ | ------ | ------- |',
      ...cases.map(c => `| ${c.mode} | ${sampleCells(c)} |`),
    ];
    return lines;
  } finally {
    await Promise.all(buses.map(bus => bus.stop()));
    await Promise.all(pools.map(knex => knex.destroy()));
  }
}

/** The PostgreSQL server's URL as the bench database was made from it. */
function postgresUrlOf(database) {
  const { host, port, user, password } = database.backendConfig.connection;
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}`;
}

async function main() {
  const { stoppers, stopAll } = processStoppers(log);
  const database = createBenchDatabase('postgres', 'replicas');
  stoppers.push(() => database.cleanup());
  try {
    const loadBefore = loadAverage();
    const lines = [
      `### Elicitation answered through the other replica (PostgreSQL, ${new Date().toISOString()})`,
      '',
    ];
    if (ONLY.has('answers')) lines.push(...(await answersSection(database, stoppers)));
    if (ONLY.has('bus')) lines.push(...(await busSection(database)));
    lines.push(
      '',
      `${describeMachine()}; load average ${loadBefore} before, ${loadAverage()} after ` +
        '(other agents share this machine: compare the rows of one run, not runs).',
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stopAll();
  }
}

main().catch(error => {
  log(error.stack ?? String(error));
  process.exit(1);
});
