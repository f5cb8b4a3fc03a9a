/*
 * The soak benchmark's report (bench/soak.mjs): Markdown tables of a finished run — operations,
 * growth after the warm-up, leaks at rest, the verdict — and its SVG plots with the raw samples.
 */
import fs from 'node:fs';
import path from 'node:path';
import { machineFacts, loadAverage } from './machine.mjs';
import { lineChartSvg } from './svgChart.mjs';
import { ms, summarize } from './stats.mjs';

/** The first 20 % of a run is its warm-up; then the first and the last tenth are compared. */
export const WARM_UP_SHARE = 0.2;
const WINDOW_SHARE = 0.1;
/** Growth that counts as not flat (5 %), and the slack for counts (descriptors, connections). */
const GROWTH_LIMIT = 0.05;
const COUNT_SLACK = 3;

/** Whether a count at rest after the traffic is within the slack of the one before it. */
function noLeak(before, after) {
  return after - before <= COUNT_SLACK;
}

/**
 * Whether the idle figures after the traffic ({fds: per replica, connections}) show no leak
 * against those before it: what the leak verdicts below judge, and what soak.mjs waits for.
 */
export function idleFiguresMatch(before, after) {
  return (
    noLeak(before.connections, after.connections) &&
    before.fds.every((fds, i) => noLeak(fds, after.fds[i]))
  );
}

const median = values => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) / 2)];
};

export function readProbe(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(line => line !== '')
    .map(line => JSON.parse(line));
}

/** Median of `value` over the first window after warm-up and over the last window. */
function firstAndLast(samples, value, { startedAt, durationMs }) {
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

/**
 * The tables of a finished run, as Markdown lines. `run`: {smoke, durationMs, rate, maxInFlight,
 * startedAt, finishedAt, ops, results, skipped, started, probes, connections, idleBefore,
 * idleAfter, idleSettleMs, budget}.
 */
export function soakTables(run) {
  const { smoke, durationMs, rate, maxInFlight, startedAt, finishedAt, ops, results } = run;
  const { skipped, started, probes, connections, idleBefore, idleAfter } = run;
  const lines = [];
  const facts = machineFacts();
  lines.push(`### Soak run (${smoke ? 'smoke, ' : ''}${Math.round(durationMs / 60_000)} min)`, '');
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
      firstAndLast(samples, s => s.rssBytes / 2 ** 20, run),
      'MiB',
    );
    row(
      `replica ${i} heap used`,
      firstAndLast(samples, s => s.heapUsedBytes / 2 ** 20, run),
      'MiB',
    );
    row(
      `replica ${i} event-loop delay p99`,
      firstAndLast(samples, s => s.loopDelayMs.p99, run),
      'ms',
    );
    row(
      `replica ${i} open descriptors`,
      firstAndLast(samples, s => s.fds, run),
      '',
      true,
    );
  });
  row(
    'PostgreSQL connections (both replicas)',
    firstAndLast(connections, s => s.n, run),
    '',
    true,
  );
  lines.push('');
  lines.push(
    `### Soak leaks: idle before the traffic → idle ${Math.round(run.idleSettleMs / 1000)} s after it`,
    '',
    '| measure | before | after | verdict |',
    '| --- | --- | --- | --- |',
  );
  const leakRow = (name, before, after) => {
    const ok = noLeak(before, after);
    verdicts.push(ok);
    lines.push(`| ${name} | ${before} | ${after} | ${ok ? 'no leak' : 'LEAKS'} |`);
  };
  idleBefore.fds.forEach((before, i) =>
    leakRow(`replica ${i} open descriptors`, before, idleAfter.fds[i]),
  );
  leakRow('PostgreSQL connections (both replicas)', idleBefore.connections, idleAfter.connections);
  lines.push('');
  const maxConnections = Math.max(...connections.map(c => c.n));
  lines.push(
    `Most PostgreSQL connections of the plugins at once: ${maxConnections} (budget: ${run.budget}).`,
  );
  lines.push(`Errors: ${totalErrors} of ${started} operations.`);
  lines.push(
    `Verdict: ${verdicts.every(Boolean) && totalErrors === 0 ? 'FLAT, no errors' : 'NOT FLAT or errors (see above)'}.`,
  );
  for (const op of ops) {
    for (const error of results.get(op.kind).errors.slice(0, 5))
      lines.push(`- ${op.kind}: ${error}`);
  }
  return lines;
}

/** Writes the SVG plots of a finished run, and its raw samples, into `outDir`. */
export function writeSoakPlots(run, outDir) {
  const { startedAt, finishedAt, probes, connections, idleBefore, idleAfter } = run;
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
      series: [{ name: 'connections', points: during(connections).map(c => [minutes(c.t), c.n]) }],
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
}
