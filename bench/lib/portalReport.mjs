/*
 * The portal benchmark's report: Markdown tables built from the measured runs (each
 * run: `{kind, records, http, store, counts?, plans?}`).
 */
import { CALL_KINDS } from './accessLog.mjs';
import { HTTP_ROUTES, STORE_QUERIES, describeRoute } from './portalScenario.mjs';
import { count, markdownTable, ms, ratio } from './stats.mjs';

/** Display names of the database kinds. */
export const DB_NAMES = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
/** A non-admin list counts as not growing when its p50 grows at most this much. */
const FLAT = 1.5;

function p50p99(stats) {
  return stats === undefined ? '–' : `${ms(stats.p50)} / ${ms(stats.p99)}`;
}

/** Growth table of one database: one line per measurement, columns per scale. */
function growthTable(runs, title, lines) {
  const base = runs[0];
  return markdownTable(
    [
      title,
      ...runs.map(run => `${count(run.records)}: rows`),
      ...runs.map(run => `${count(run.records)}: p50 / p99 ms`),
      ...runs.slice(1).map(run => `p50 ${count(run.records)} / ${count(base.records)}`),
    ],
    lines.map(line => [
      line.label,
      ...runs.map(run => (line.rows(run) === undefined ? '–' : count(line.rows(run)))),
      ...runs.map(run => p50p99(line.stats(run))),
      ...runs.slice(1).map(run => ratio(line.stats(run).p50, line.stats(base).p50)),
    ]),
  );
}

function httpLines(bulkSize) {
  return [
    ...HTTP_ROUTES.map(route => ({
      label: describeRoute(route),
      rows: run => run.http.rows[route.id],
      stats: run => run.http.stats[route.id],
    })),
    {
      label: `POST /requests/bulk-approve — carol (${bulkSize} Pending keys)`,
      rows: run => run.http.rows.bulk,
      stats: run => run.http.stats.bulk,
    },
  ];
}

/**
 * The backend process's mean CPU time and run-queue wait per request (its threads'
 * scheduler counters around each call): what a request costs, and what the machine's
 * load added to its wall time.
 */
function cpuTable(runs, bulkSize) {
  const lines = [
    ...HTTP_ROUTES.map(route => ({ id: route.id, label: describeRoute(route) })),
    { id: 'bulk', label: `POST /requests/bulk-approve — carol (${bulkSize} Pending keys)` },
  ];
  return markdownTable(
    [
      'request',
      ...runs.map(
        run =>
          `${count(run.records)}: backend CPU (all threads) / main thread waiting for a CPU, ms`,
      ),
    ],
    lines.map(line => [
      line.label,
      ...runs.map(run => `${ms(run.http.cpu[line.id])} / ${ms(run.http.wait[line.id])}`),
    ]),
  );
}

function storeLines() {
  return STORE_QUERIES.map(query => ({
    label: query.label,
    rows: run => run.store[query.id].rows,
    stats: run => run.store[query.id].stats,
  }));
}

function sideBySideTable(byDatabase, largest) {
  const kinds = Object.keys(byDatabase);
  const runsAt = kinds.map(kind => byDatabase[kind].find(run => run.records === largest));
  const lines = [
    ...httpLines(runsAt[0].http.rows.bulk).map(line => ({ ...line, label: line.label })),
    ...storeLines().map(line => ({ ...line, label: `store: ${line.label}` })),
  ];
  const two = kinds.length > 1;
  return markdownTable(
    [
      `at ${count(largest)} records`,
      ...kinds.map(kind => `${DB_NAMES[kind]} p50 / p99 ms`),
      ...(two ? [`p50 ${DB_NAMES[kinds[1]]} / ${DB_NAMES[kinds[0]]}`] : []),
    ],
    lines.map(line => [
      line.label,
      ...runsAt.map(run => p50p99(line.stats(run))),
      ...(two ? [ratio(line.stats(runsAt[1]).p50, line.stats(runsAt[0]).p50)] : []),
    ]),
  );
}

function countsTable(byDatabase) {
  const rows = [];
  for (const [kind, runs] of Object.entries(byDatabase)) {
    for (const run of runs.filter(r => r.counts !== undefined)) {
      for (const { label, counts } of run.counts) {
        rows.push([
          label,
          DB_NAMES[kind],
          counts.portal,
          ...CALL_KINDS.map(name => (counts[name] / Math.max(1, counts.portal)).toFixed(2)),
        ]);
      }
    }
  }
  return markdownTable(
    ['portal request', 'database', 'requests', ...CALL_KINDS.map(name => `${name} / request`)],
    rows,
  );
}

function targetsTable(byDatabase, smallest, largest) {
  const rows = [];
  for (const [kind, runs] of Object.entries(byDatabase)) {
    const big = runs.find(run => run.records === largest);
    const small = runs.find(run => run.records === smallest);
    for (const id of ['my', 'list-alice', 'list-bob']) {
      const label = describeRoute(HTTP_ROUTES.find(route => route.id === id));
      const p50 = big.http.stats[id].p50;
      rows.push([
        `${label}: p50 ≤ 10 ms at ${count(largest)} (HTTP${kind === 'sqlite' ? '' : '; the target is for SQLite'})`,
        DB_NAMES[kind],
        `HTTP ${ms(p50)} ms; store alone ${ms(big.store[id].stats.p50)} ms`,
        kind !== 'sqlite' ? '(for reference)' : p50 <= 10 ? 'met' : 'missed',
      ]);
      if (big !== small) {
        const growth = p50 / small.http.stats[id].p50;
        const storeGrowth = big.store[id].stats.p50 / small.store[id].stats.p50;
        rows.push([
          `${label}: no growth ${count(smallest)} → ${count(largest)} (≤ ${FLAT}× counts as flat)`,
          DB_NAMES[kind],
          `HTTP ${growth.toFixed(2)}×, store ${storeGrowth.toFixed(2)}×`,
          growth <= FLAT && storeGrowth <= FLAT ? 'met' : 'missed',
        ]);
      }
    }
    for (const run of [small, big].filter((r, i, all) => all.indexOf(r) === i)) {
      const http = run.http.stats['page-last'].p50 / run.http.stats['page-first'].p50;
      const store = run.store['page-last'].stats.p50 / run.store['page-first'].stats.p50;
      rows.push([
        `last page of 100 of the Pending list costs the first's at ${count(run.records)} (≤ ${FLAT}×)`,
        DB_NAMES[kind],
        `HTTP ${http.toFixed(2)}×, store ${store.toFixed(2)}×`,
        http <= FLAT && store <= FLAT ? 'met' : 'missed',
      ]);
    }
    const bulk = big.http.stats.bulk;
    rows.push([
      `bulk-approve of ${big.http.rows.bulk}: ≤ 1 s at ${count(largest)}`,
      DB_NAMES[kind],
      `p50 ${ms(bulk.p50)} ms, max ${ms(bulk.max)} ms`,
      bulk.p50 <= 1000 ? 'met' : 'missed',
    ]);
    for (const run of runs.filter(r => r.counts !== undefined)) {
      const perRequest = run.counts.map(c => c.counts.authorize / Math.max(1, c.counts.portal));
      rows.push([
        'authorize round trips per portal request: exactly 1',
        DB_NAMES[kind],
        perRequest.map(value => value.toFixed(2)).join(', '),
        perRequest.every(value => value === 1) ? 'met' : 'missed',
      ]);
    }
  }
  return markdownTable(['target', 'database', 'measured', 'result'], rows);
}

/**
 * First vs last page of 100 of the admin's Pending list, per database and scale, with
 * the ratio last / first (HTTP and store alone).
 */
function pagesTable(byDatabase) {
  const rows = [];
  for (const [kind, runs] of Object.entries(byDatabase)) {
    for (const run of runs) {
      const pending = run.store['admin-pending'].rows;
      for (const [where, stats] of [
        ['HTTP', run.http.stats],
        ['store', Object.fromEntries(Object.entries(run.store).map(([id, q]) => [id, q.stats]))],
      ]) {
        rows.push([
          DB_NAMES[kind],
          count(run.records),
          pending === undefined ? '–' : count(pending),
          where,
          p50p99(stats['page-first']),
          p50p99(stats['page-last']),
          ratio(stats['page-last'].p50, stats['page-first'].p50),
        ]);
      }
    }
  }
  return markdownTable(
    [
      'database',
      'records',
      'Pending rows',
      'measured',
      'first page of 100: p50 / p99 ms',
      'last page of 100: p50 / p99 ms',
      'p50 last / first',
    ],
    rows,
  );
}

function phasesTable(phases) {
  return markdownTable(
    ['phase', 'seconds', 'load average (1, 5, 15 min) at its end'],
    phases.map(phase => [phase.name, phase.seconds.toFixed(0), phase.load]),
  );
}

/** The whole report as Markdown. */
export function portalReport({ header, byDatabase, phases, seeds, scales }) {
  const smallest = Math.min(...scales);
  const largest = Math.max(...scales);
  const out = [...header, '', '### Phases', '', phasesTable(phases), '', '### Seeding', ''];
  out.push(
    markdownTable(
      ['database', 'records', 'seed s (migrations + batch inserts)', 'backend start s'],
      seeds.map(seed => [
        DB_NAMES[seed.kind],
        count(seed.records),
        seed.seedSeconds.toFixed(1),
        seed.startSeconds.toFixed(1),
      ]),
    ),
  );
  for (const [kind, runs] of Object.entries(byDatabase)) {
    out.push('', `### HTTP on the real backend — ${DB_NAMES[kind]} (client-side ms)`, '');
    out.push(growthTable(runs, 'request', httpLines(runs[0].http.rows.bulk)));
    out.push(
      '',
      `Backend process per request — ${DB_NAMES[kind]} (means over the same samples):`,
      '',
    );
    out.push(cpuTable(runs, runs[0].http.rows.bulk));
    out.push(
      '',
      `### Store alone — ${DB_NAMES[kind]} (DatabasePortalStore.listKeys in the benchmark process)`,
      '',
    );
    out.push(growthTable(runs, 'store query (no HTTP, no permissions)', storeLines()));
  }
  out.push(
    '',
    `### Side by side at ${count(largest)} records`,
    '',
    sideBySideTable(byDatabase, largest),
  );
  out.push(
    '',
    "### Pages: first vs last page of 100 of the admin's Pending list",
    '',
    pagesTable(byDatabase),
  );
  out.push(
    '',
    '### Internal calls per portal request (access log at LOG_LEVEL=info)',
    '',
    countsTable(byDatabase),
  );
  const counted = Object.values(byDatabase)
    .flat()
    .find(run => run.counts !== undefined);
  for (const { label, lastRequest } of counted?.counts ?? []) {
    if (!label.startsWith('GET /requests/my (alice)')) continue;
    out.push(
      '',
      `Access log of one ${label} (${DB_NAMES[counted.kind]}), in the order the lines were written:`,
      '',
    );
    out.push('```', ...lastRequest, '```');
  }
  out.push('', '### Targets', '', targetsTable(byDatabase, smallest, largest));
  for (const [kind, runs] of Object.entries(byDatabase)) {
    const run = runs.find(r => r.plans !== undefined);
    if (run === undefined) continue;
    out.push('', `### Query plans — ${DB_NAMES[kind]} at ${count(run.records)} records`);
    for (const query of STORE_QUERIES) {
      out.push('', `${query.label}:`, '```', run.plans[query.id], '```');
    }
  }
  return `${out.join('\n')}\n`;
}
