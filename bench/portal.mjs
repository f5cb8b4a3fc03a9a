#!/usr/bin/env node
/*
 * Portal benchmark: API key request lists and bulk approval at 1,000, 10,000 and 100,000
 * records, on SQLite and PostgreSQL, through HTTP on the real development backend (real
 * sign-in, the RBAC plugin with the example policies), the same queries on the store
 * alone, and the internal calls (authorize round trips) per portal request. Pages: the
 * first and the last page of 100 of the admin's Pending list, side by side with their
 * ratio (a keyset page costs the same wherever it is and however big the table).
 *
 *   node bench/portal.mjs                 # full run (see bench/README.md), 3–7 minutes
 *   node bench/portal.mjs --smoke         # 200 records, SQLite, a few iterations (~15 s)
 *
 * Options: --databases sqlite,postgres  --scales 1000,10000,100000  --iterations 80
 *          --bulk-iterations 5  --count-iterations 10  --node-env development
 *
 * Every (database, scale) pair gets a fresh database, seeded BEFORE a backend process
 * starts on it (the plugin's migrations plus batch inserts). All those backends run at
 * once (LOG_LEVEL=warn) and the measurements interleave them (see lib/portalMeasure.mjs).
 * The round-trip count then runs on one more backend per database at LOG_LEVEL=info, on
 * the smallest data set; in --smoke mode the single backend runs at info level and does
 * both. Tables (Markdown) go to stdout, progress to stderr.
 */
import { parseArgs } from 'node:util';
import { startPortalBackend } from './lib/backend.mjs';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import {
  FIXTURE_SLICE_SIZE,
  PAYMENTS_API_KEYS,
  PRODUCT_COUNT,
  USER_COUNT,
} from './lib/portalData.mjs';
import { createBenchDatabase, seedPortal } from './lib/portalDatabases.mjs';
import {
  countRoundTrips,
  measureHttp,
  measureStore,
  prepareLastPages,
  queryPlans,
} from './lib/portalMeasure.mjs';
import { DB_NAMES, portalReport } from './lib/portalReport.mjs';
import { ADMIN_EVERY, USERS } from './lib/portalScenario.mjs';
import { count } from './lib/stats.mjs';

const { values: options } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    databases: { type: 'string' },
    scales: { type: 'string' },
    iterations: { type: 'string' },
    'bulk-iterations': { type: 'string' },
    'count-iterations': { type: 'string' },
    'node-env': { type: 'string', default: 'development' },
  },
});
const smoke = options.smoke;
const databases = (options.databases ?? (smoke ? 'sqlite' : 'sqlite,postgres')).split(',');
const scales = (options.scales ?? (smoke ? '200' : '1000,10000,100000')).split(',').map(Number);
const settings = {
  iterations: Number(options.iterations ?? (smoke ? 5 : 80)),
  bulkIterations: Number(options['bulk-iterations'] ?? (smoke ? 1 : 5)),
  countIterations: Number(options['count-iterations'] ?? (smoke ? 3 : 10)),
  warmup: smoke ? 2 : 15,
  coldUserInfo: !smoke,
};
// NODE_ENV of the timing backends. The counting backends stay in development: their access
// log is parsed as the development log format prints it. --smoke runs one backend for both.
const nodeEnv = smoke ? 'development' : options['node-env'];
if (!['development', 'production'].includes(nodeEnv)) {
  throw new Error(`--node-env takes development or production, not ${nodeEnv}`);
}
for (const kind of databases) {
  if (DB_NAMES[kind] === undefined)
    throw new Error(`unknown database ${kind}: use sqlite or postgres`);
}
if (scales.some(records => !Number.isInteger(records) || records < 1)) {
  throw new Error(`--scales takes positive whole numbers, not ${options.scales}`);
}

function log(message) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** What to undo when the run ends or is interrupted: backends first, then databases. */
const cleanups = [];
async function cleanUp() {
  while (cleanups.length > 0)
    await cleanups
      .pop()()
      .catch(error => log(`cleanup: ${error}`));
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    log(`${signal}: stopping backends and dropping the benchmark databases`);
    await cleanUp();
    process.exit(130);
  });
}

const phases = [];
async function phase(name, body) {
  const started = performance.now();
  log(`${name}…`);
  const result = await body();
  phases.push({ name, seconds: (performance.now() - started) / 1000, load: loadAverage() });
  return result;
}

async function startBackendOn(run, logLevel, env = 'development') {
  const started = await startPortalBackend({
    database: run.database.backendConfig,
    logLevel,
    users: USERS,
    env: { NODE_ENV: env },
  });
  cleanups.push(() => started.backend.stop());
  return started;
}

const facts = machineFacts();
const startedAt = new Date();
const loadAtStart = loadAverage();
const byDatabase = Object.fromEntries(databases.map(kind => [kind, []]));
const seeds = [];
try {
  await phase('seed the databases and start one backend on each', async () => {
    for (const kind of databases) {
      for (const records of scales) {
        const database = createBenchDatabase(kind, String(records));
        const knex = await database.openPortal();
        cleanups.push(async () => {
          await knex.destroy();
          await database.cleanup();
        });
        const seedSeconds = await seedPortal(knex, records);
        const run = { kind, records, database, knex };
        const { backend, tokens, startSeconds, pid } = await startBackendOn(
          run,
          smoke ? 'info' : 'warn',
          nodeEnv,
        );
        Object.assign(run, { backend, tokens, pid });
        byDatabase[kind].push(run);
        seeds.push({ kind, records, seedSeconds, startSeconds });
        log(
          `${DB_NAMES[kind]} ${count(records)}: seeded in ${seedSeconds.toFixed(1)} s, backend up in ${startSeconds.toFixed(1)} s`,
        );
      }
    }
  });
  const runs = Object.values(byDatabase).flat();
  await phase("find the last page of the admin's Pending list", () => prepareLastPages(runs));
  await phase('HTTP timings (all runs interleaved)', () => measureHttp(runs, settings));
  if (smoke) {
    await phase('internal calls per request (same backend, info level)', () =>
      countRoundTrips(runs[0], settings),
    );
  }
  await phase('stop the timing backends', async () => {
    for (const run of runs) await run.backend.stop();
  });
  if (!smoke) {
    for (const kind of databases) {
      const run = byDatabase[kind][0];
      await phase(
        `internal calls per request: ${DB_NAMES[kind]} ${count(run.records)}, new backend at LOG_LEVEL=info`,
        async () => {
          const { backend, tokens } = await startBackendOn(run, 'info');
          try {
            const counted = { ...run, backend, tokens };
            await countRoundTrips(counted, settings);
            run.counts = counted.counts;
          } finally {
            await backend.stop();
          }
        },
      );
    }
  }
  await phase('store timings (all databases interleaved)', () => measureStore(runs, settings));
  await phase('query plans at the largest scale', async () => {
    for (const kind of databases) {
      await queryPlans(byDatabase[kind].find(run => run.records === Math.max(...scales)));
    }
  });
} finally {
  await cleanUp();
}

const seconds = (Date.now() - startedAt.getTime()) / 1000;
const header = [
  `## Portal benchmark run ${startedAt.toISOString()}${smoke ? ' (SMOKE: the numbers mean nothing)' : ''}`,
  '',
  `Machine: ${facts.nproc} cores (nproc), ${facts.memoryGiB} GiB, ${facts.cpuModel}; ${facts.platform}; Node ${facts.node}.`,
  `Load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadAverage()} at the end; the run took ${seconds.toFixed(0)} s.`,
  `Data: ${USER_COUNT} users, ${PRODUCT_COUNT} products; the fixture slice is ${FIXTURE_SLICE_SIZE} keys ` +
    `(alice 100, payments-api ${PAYMENTS_API_KEYS}); ${settings.iterations} samples per list (the admin list every ` +
    `${ADMIN_EVERY}th), ${settings.bulkIterations} bulk approvals, ${settings.warmup} warm-up rounds.`,
  `Timing backends: NODE_ENV=${nodeEnv}${nodeEnv === 'development' ? ' (pretty-printed JSON answers)' : ' (compact JSON answers, JSON logs)'}; the internal-call count: NODE_ENV=development.`,
  `Command: node bench/portal.mjs ${process.argv.slice(2).join(' ')}`.trimEnd(),
];
process.stdout.write(portalReport({ header, byDatabase, phases, seeds, scales }));
