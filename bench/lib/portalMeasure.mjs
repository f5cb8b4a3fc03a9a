/*
 * The portal benchmark's measurements. Each takes every run (one per database and
 * scale, each with its own backend process and database) and interleaves them: sample i
 * of a route is taken on every run before sample i+1 on any, so that the load other
 * processes put on the machine falls on every scale and database alike and the ratios
 * between them stay fair even when the absolute numbers drift.
 */
import { countCalls, accessLogRequests } from './accessLog.mjs';
import { portalStoreOn, resetToPending } from './portalDatabases.mjs';
import { schedDelta, schedStat } from './procStat.mjs';
import {
  HTTP_ROUTES,
  STORE_QUERIES,
  bulkApprove,
  bulkBatch,
  findLastPages,
  routeCall,
  storeQuery,
} from './portalScenario.mjs';
import { summarize } from './stats.mjs';

function statsOf(samples) {
  return Object.fromEntries(Object.entries(samples).map(([id, values]) => [id, summarize(values)]));
}

/** Mean of the defined values, or NaN. */
function mean(values) {
  const defined = values.filter(value => value !== undefined);
  return defined.length === 0 ? Number.NaN : defined.reduce((a, b) => a + b, 0) / defined.length;
}

/**
 * Times `call` and reads the backend's scheduler counters around it: `{elapsed, json,
 * cpuMs, waitMs}` (the last two undefined off Linux or without a pid).
 */
async function timedWithCpu(run, call) {
  const before = schedStat(run.pid);
  const result = await call();
  const delta = schedDelta(before, schedStat(run.pid));
  return { ...result, cpuMs: delta?.cpuMs, waitMs: delta?.waitMs };
}

/**
 * p50/p99 of each route and of the bulk approval on every run, and the backend's mean
 * CPU and run-queue wait per request; sets `run.http` to `{ stats, rows, cpu, wait }`
 * (each keyed by route id, plus `bulk`).
 */
export async function measureHttp(runs, { iterations, warmup, bulkIterations }) {
  const ids = [...HTTP_ROUTES.map(route => route.id), 'bulk'];
  const empty = () => Object.fromEntries(ids.map(id => [id, []]));
  const samples = new Map(
    runs.map(run => [run, { elapsed: empty(), cpu: empty(), wait: empty() }]),
  );
  const rows = new Map(runs.map(run => [run, {}]));
  const record = (run, id, { elapsed, cpuMs, waitMs }) => {
    const s = samples.get(run);
    s.elapsed[id].push(elapsed);
    s.cpu[id].push(cpuMs);
    s.wait[id].push(waitMs);
  };
  for (let i = 0; i < warmup; i++) {
    for (const route of HTTP_ROUTES) {
      for (const run of runs) await routeCall(run.backend, run.tokens, route, run);
    }
  }
  for (let i = 0; i < iterations; i++) {
    for (const route of HTTP_ROUTES) {
      if (route.every !== undefined && i % route.every !== 0) continue;
      for (const run of runs) {
        const call = () => routeCall(run.backend, run.tokens, route, run);
        const result = await timedWithCpu(run, call);
        record(run, route.id, result);
        rows.get(run)[route.id] = result.json.items?.length;
      }
    }
  }
  // Between repetitions the same keys go back to Pending (outside the timed call).
  for (let i = 0; i < bulkIterations; i++) {
    for (const run of runs) {
      const names = bulkBatch(run.records);
      rows.get(run).bulk = names.length;
      await resetToPending(run.knex, names);
      const result = await timedWithCpu(run, async () => ({
        elapsed: await bulkApprove(run.backend, run.tokens.carol, names),
      }));
      record(run, 'bulk', result);
      await resetToPending(run.knex, names);
    }
  }
  for (const run of runs) {
    const s = samples.get(run);
    run.http = {
      stats: statsOf(s.elapsed),
      rows: rows.get(run),
      cpu: Object.fromEntries(ids.map(id => [id, mean(s.cpu[id])])),
      wait: Object.fromEntries(ids.map(id => [id, mean(s.wait[id])])),
    };
  }
}

/** Finds the last page of the admin's Pending list on every run (HTTP and store). */
export async function prepareLastPages(runs) {
  for (const run of runs) await findLastPages(run, await portalStoreOn(run.knex));
}

/** Waits until the backend's output has been quiet for a moment (log lines flushed). */
async function settleLog(backend) {
  let length = -1;
  while (backend.output().length !== length) {
    length = backend.output().length;
    await new Promise(resolve => setTimeout(resolve, 150));
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
/** Backstage's CachedUserInfoService keeps a token's user info this long (5 s). */
const USER_INFO_CACHE_MS = 5_000;

/**
 * Internal calls per portal request, by route, from the access log of a backend at
 * LOG_LEVEL=info. Each route is called once to warm up (the first call of a user also
 * fetches its user info and the JWKS), then `countIterations` times back to back; with
 * `coldUserInfo`, one more case waits out the user-info cache before each call.
 */
export async function countRoundTrips(run, { countIterations, coldUserInfo }) {
  const { backend, tokens, knex } = run;
  const names = bulkBatch(run.records);
  const myRoute = HTTP_ROUTES.find(route => route.id === 'my');
  const cases = [
    ...HTTP_ROUTES.filter(route => route.url === undefined).map(route => ({
      label: `${route.route} (${route.caller})`,
      call: () => routeCall(backend, tokens, route, run),
    })),
    {
      label: `POST /requests/bulk-approve of ${names.length} (carol)`,
      call: async () => {
        await resetToPending(knex, names);
        await bulkApprove(backend, tokens.carol, names);
      },
    },
    ...(coldUserInfo
      ? [
          {
            label: 'GET /requests/my (alice), after 5.5 s idle: user-info cache expired',
            iterations: 1,
            call: async () => {
              await sleep(USER_INFO_CACHE_MS + 500);
              await routeCall(backend, tokens, myRoute, run);
            },
          },
        ]
      : []),
  ];
  const results = [];
  for (const testCase of cases) {
    await testCase.call();
    await settleLog(backend);
    const before = backend.output().length;
    for (let i = 0; i < (testCase.iterations ?? countIterations); i++) await testCase.call();
    await settleLog(backend);
    const isPortalCall = (_method, url) => url.startsWith('/api/portal/');
    const slice = backend.output().slice(before);
    results.push({
      label: testCase.label,
      counts: countCalls(slice, isPortalCall),
      lastRequest: lastPortalRequest(accessLogRequests(slice), isPortalCall),
    });
  }
  await resetToPending(knex, names);
  run.counts = results;
}

/**
 * The last portal request of an access log and the internal calls logged just before it
 * (a request's own line is written when it finishes, after the calls it made).
 */
function lastPortalRequest(requests, isPortalCall) {
  const last = requests.findLastIndex(([method, url]) => isPortalCall(method, url));
  let first = last;
  while (first > 0 && !isPortalCall(...requests[first - 1])) first -= 1;
  return requests.slice(first, last + 1).map(([method, url]) => `${method} ${url}`);
}

/**
 * The store queries on every run's database through DatabasePortalStore in this
 * process (no HTTP, no permissions); sets `run.store[queryId] = {stats, rows}`.
 */
export async function measureStore(runs, { iterations, warmup }) {
  const stores = new Map();
  for (const run of runs) stores.set(run, await portalStoreOn(run.knex));
  const samples = new Map(
    runs.map(run => [run, Object.fromEntries(STORE_QUERIES.map(q => [q.id, []]))]),
  );
  const rows = new Map(runs.map(run => [run, {}]));
  for (let i = 0; i < warmup + iterations; i++) {
    for (const query of STORE_QUERIES) {
      if (query.every !== undefined && i % query.every !== 0) continue;
      for (const run of runs) {
        const started = performance.now();
        const keys = await storeQuery(stores.get(run), query, run);
        const elapsed = performance.now() - started;
        if (i < warmup) continue;
        samples.get(run)[query.id].push(elapsed);
        rows.get(run)[query.id] = keys.length;
      }
    }
  }
  for (const run of runs) {
    const stats = statsOf(samples.get(run));
    run.store = Object.fromEntries(
      STORE_QUERIES.map(query => [
        query.id,
        { stats: stats[query.id], rows: rows.get(run)[query.id] },
      ]),
    );
  }
}

/** The database's plan for the SQL that listKeys sends for each store query. */
export async function queryPlans(run) {
  const store = await portalStoreOn(run.knex);
  const plans = {};
  for (const query of STORE_QUERIES) plans[query.id] = await planOf(run, store, query);
  run.plans = plans;
}

async function planOf(run, store, query) {
  const { knex } = run;
  const statements = [];
  const listener = event => statements.push(event);
  knex.on('query', listener);
  try {
    await storeQuery(store, query, run);
  } finally {
    knex.off('query', listener);
  }
  const { sql, bindings } = statements[statements.length - 1];
  const positional = sql.replace(/\$\d+/g, '?');
  if (knex.client.config.client === 'pg') {
    const result = await knex.raw(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${positional}`,
      bindings,
    );
    return result.rows.map(row => row['QUERY PLAN']).join('\n');
  }
  const result = await knex.raw(`EXPLAIN QUERY PLAN ${positional}`, bindings);
  return result.map(row => row.detail).join('\n');
}
