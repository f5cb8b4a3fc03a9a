#!/usr/bin/env node
/*
 * Broker benchmark: the real development backend with the broker in front of server-everything
 * and the example MCP server, measured in one run against the same servers reached directly,
 * through a byte-pipe relay (bench/pipeRelay.mjs: the floor of any relay) and through mcp-hub.
 * Prints Markdown tables (paste them into docs/benchmarks.md).
 *
 *   node bench/broker.mjs            full run (~5 minutes on 2 cores)
 *   node bench/broker.mjs --smoke    tiny counts, < 30 s (what CI runs)
 *   node bench/broker.mjs --only calls,modern,fanout,memory,elicitation,permissions,identity,profile
 *   node bench/broker.mjs --cpu-prof /tmp/prof   also write a CPU profile of the backend
 *   node bench/broker.mjs --only profile [--profile-out /tmp/broker.cpuprofile]
 *   node bench/broker.mjs --only profile --profile-era modern   the profile over 2026-07-28 calls
 *   node bench/broker.mjs --log-level info      the backend's LOG_LEVEL (default warn)
 *   node bench/broker.mjs --only profile --observed   the first backend with telemetry and a
 *                                               non-binding rate limit on (what they cost, by function)
 *
 * Sections:
 *   calls        tools/call echo: direct vs pipe relay vs broker vs mcp-hub, sequential and 50
 *                in flight, alternating rounds, p50/p99, calls/s, CPU per call of every process
 *   modern       the same for 2026-07-28: the SDK v2 client (stateless requests) → broker →
 *                the modern example server (SDK v2), vs the same client straight to that server
 *                and through the pipe relay
 *   fanout       N open GET streams, one backend tools/list_changed, delivery latency to all
 *   memory       broker RSS per idle session (with its GET stream), RSS after all are DELETEd
 *   elicitation  `confirm` (elicitation/create → answer → result) through the broker vs direct
 *   permissions  tools/call echo through the broker as alice (the fixture's conditional policy)
 *                vs carol (a policy that allows everything), alternating rounds in one backend;
 *                permission-service calls per 1,000 tool calls (from /status)
 *   telemetry    tools/call echo through a second backend with OpenTelemetry on (the development
 *                instrumentation: metrics scraped every 5 s, every span kept) and a non-binding
 *                per-person rate limit, vs the first backend (all off), alternating rounds
 *   identity     tools/call `whoami` as alice on one whoami server registered twice: in broker
 *                mode (the static token) and in tokenExchange mode (alice's exchanged token, a
 *                cache hit after the first call), alternating rounds; broker CPU per call and
 *                throughput as ratios
 *   profile      (only when asked for, and in --smoke) a CPU profile of the backend, taken through its inspector
 *                over echo calls at 50 in flight through the broker (start-up and warm-up
 *                excluded), summed by bench/profileSummary.mjs: per component, package, function
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { count, markdownTable, ms, summarize } from './lib/stats.mjs';
import {
  rssKiB,
  startBrokerBackend,
  startExampleServer,
  startMcpHub,
  startPipeRelay,
  startIdentityServers,
  startServerEverything,
  waitForBrokerBackends,
} from './lib/brokerProcesses.mjs';
import { connectClient, connectModernClient, findTool } from './lib/mcpClients.mjs';
import { measureCalls } from './lib/brokerCalls.mjs';
import { RawSessionSet } from './lib/rawSessions.mjs';
import { connectInspector, inspectorUrl } from './lib/inspectorGc.mjs';
import { profileSummaryLines } from './profileSummary.mjs';
import { processStoppers } from './lib/processStoppers.mjs';

const require = createRequire(import.meta.url);
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const argValue = name => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
// The profile is asked for by name; the smoke run includes it so that it keeps working.
const only = new Set(
  (
    argValue('--only') ??
    `calls,modern,fanout,memory,elicitation,permissions,telemetry,identity${smoke ? ',profile' : ''}`
  ).split(','),
);
const cpuProfDir = argValue('--cpu-prof');
const profileOut = argValue('--profile-out');
// The era of the profiled calls: legacy (server-everything, a session) or modern (stateless).
const profileEra = argValue('--profile-era') ?? 'legacy';
// The backend's LOG_LEVEL: warn by default, so that request logging is not what is measured.
const logLevel = argValue('--log-level') ?? 'warn';
// The first backend with telemetry and a rate limit on, as the telemetry section's second one.
const observed = args.includes('--observed');
/** What the telemetry section (and --observed) turn on: the instrumentation and a limit. */
const OBSERVED_BACKEND = {
  instrumentation: true,
  mcpBroker: { rateLimits: { default: { calls: 1_000_000_000, per: { minutes: 1 } } } },
};

const COUNTS = smoke
  ? {
      rounds: 2,
      profiled: 100,
      sequential: 20,
      concurrent: 40,
      inFlight: 10,
      fanout: [20],
      triggers: 1,
      memory: 20,
      elicitation: 4,
    }
  : {
      rounds: 4,
      profiled: 5000,
      sequential: 1000,
      concurrent: 2000,
      inFlight: 50,
      fanout: [1000, 10000],
      triggers: 3,
      memory: 10000,
      elicitation: 200,
    };

const STATIC_TOKEN = 'dev-only-static-token-0123456789';

/** Issue #21's targets for the call path (the pipe relay is shown beside them, not judged). */
const TARGETS = {
  throughputVsDirect: 0.85,
  throughputVsHub: 1.3,
  sequentialOverheadMs: 0.7,
  brokerCpuMsPerCall: 0.4,
  fanoutP99Ms: { 1000: 100, 10000: 1000 },
  rssPerSessionKiB: 30,
  /** Throughput with the fixture's conditional policy ÷ with a policy that allows everything. */
  permissionsThroughputRatio: 0.95,
  /** Issue #31: throughput with metrics, traces and a non-binding limit ÷ all off, 50 in flight. */
  telemetryThroughputRatio: 0.95,
};

const sleep = millis => new Promise(resolve => setTimeout(resolve, millis));
const verdict = ok => (ok ? 'met' : '**missed**');
const log = message => process.stderr.write(`[broker-bench] ${message}\n`);

const { stoppers, stopAll } = processStoppers(log);

/** Starts processes in parallel; each one that started is stopped at the end even if another failed. */
async function startAll(starting) {
  const settled = await Promise.allSettled(starting);
  for (const result of settled) {
    if (result.status === 'fulfilled') {
      const started = result.value;
      stoppers.push(() => (started.backend ?? started).stop());
    }
  }
  const failure = settled.find(result => result.status === 'rejected');
  if (failure) throw failure.reason;
  return settled.map(result => result.value);
}

async function main() {
  const started = performance.now();
  const loadBefore = loadAverage();
  log('starting server-everything, the example servers, mcp-hub, the pipe relays and the backend');
  const output = [];
  try {
    // The 2026-07-28 example server (and a pipe relay in front of it) only for the modern section.
    const [everything, example, modern] = await startAll([
      startServerEverything(),
      startExampleServer(),
      ...(only.has('modern') || (only.has('profile') && profileEra === 'modern')
        ? [startExampleServer('src/modernMain.ts')]
        : []),
    ]);
    const servers = { everything: everything.url, example: example.url };
    if (modern) servers['example-modern'] = modern.url;
    // The token exchange server and the whoami server live in this process (spec §11).
    const identity = only.has('identity') ? await startIdentityServers() : undefined;
    if (identity) {
      stoppers.push(() => identity.stop());
      Object.assign(servers, identity.servers);
    }
    const [hub, pipe, broker, modernPipe] = await startAll([
      startMcpHub({ everything: everything.url }),
      startPipeRelay(everything.url),
      startBrokerBackend(
        servers,
        // The inspector lets the memory section force full GCs before it reads RSS.
        [
          '--inspect=127.0.0.1:0',
          ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
        ],
        logLevel,
        observed ? OBSERVED_BACKEND : {},
      ),
      ...(modern ? [startPipeRelay(modern.url)] : []),
    ]);
    // startBackendProcess returns once alice can sign in: no retry needed. Alice has the
    // development fixture's mcp-user role (read-only tools and the example server's echo, count
    // and confirm); carol may use everything and read the status.
    identity?.trustBroker(broker.backend.baseUrl);
    const token = await broker.backend.signIn('alice');
    const adminToken = await broker.backend.signIn('carol');
    await waitForBrokerBackends(broker.backend, adminToken, Object.keys(servers));

    const facts = machineFacts();
    output.push(
      `## Broker benchmark${smoke ? ' (smoke)' : ''}`,
      '',
      `Machine: ${facts.nproc} cores, ${facts.memoryGiB} GiB, ${facts.cpuModel}; Node ${facts.node}; ${facts.platform}.`,
      `Load average before the run: ${loadBefore} (other jobs share this machine).`,
      `Command: \`node bench/broker.mjs${args.length ? ` ${args.join(' ')}` : ''}\`; backend LOG_LEVEL=${logLevel}${observed ? '; the first backend with telemetry and a non-binding rate limit (--observed)' : ''}.`,
      '',
    );

    if (only.has('calls'))
      output.push(...(await callsSection({ everything, pipe, hub, broker, token })));
    if (only.has('modern'))
      output.push(...(await modernSection({ modern, modernPipe, broker, token })));
    // Carol's sessions: the trigger adds a tool without annotations, which her view shows;
    // list_changed goes only to streams whose permitted view a change alters, and alice's
    // read-only tools would not.
    if (only.has('fanout') || only.has('memory'))
      output.push(...(await fanoutAndMemorySection({ broker, example, token: adminToken })));
    if (only.has('elicitation'))
      output.push(...(await elicitationSection({ broker, example, token })));
    if (only.has('permissions'))
      output.push(...(await permissionsSection({ broker, token, adminToken })));
    if (only.has('telemetry')) output.push(...(await telemetrySection({ servers, broker, token })));
    if (only.has('identity')) output.push(...(await identitySection({ broker, token, identity })));
    if (only.has('profile')) output.push(...(await profileSection({ broker, token })));

    output.push(
      `Load average after the run: ${loadAverage()}; run took ${((performance.now() - started) / 1000).toFixed(0)} s.`,
      '',
    );
  } finally {
    await stopAll();
  }
  process.stdout.write(`${output.join('\n')}\n`);
}

/** The two modes of every tools/call measurement: sequential and COUNTS.inFlight in flight. */
function callModes() {
  return [
    { name: 'sequential', total: COUNTS.sequential, concurrency: 1 },
    {
      name: `${COUNTS.inFlight} in flight`,
      total: COUNTS.concurrent,
      concurrency: COUNTS.inFlight,
    },
  ];
}

/**
 * Warms each client up (JIT, connection pools, the broker's backend session or pool entry) and
 * makes it a measureCalls target calling the echo tool: `toolOf(name)` names it (the first tool
 * named `echo` or ending with `_echo` by default), `pidsOf(name)` gives the processes whose CPU
 * that target's calls cost.
 */
async function echoTargets(clients, pidsOf, toolOf = () => 'echo') {
  const targets = [];
  for (const [name, client] of Object.entries(clients)) {
    const tool = await findTool(client, toolOf(name));
    const call = () => client.callTool({ name: tool, arguments: { message: 'hello' } });
    for (let i = 0; i < (smoke ? 5 : 100); i += 1) await call();
    targets.push({ name, call, pids: pidsOf(name) });
  }
  return targets;
}

/** Measures `targets` in both call modes over COUNTS.rounds rounds, then closes `clients`. */
async function measureThenClose(section, clients, targets) {
  const modes = callModes();
  log(
    `${section}: ${COUNTS.rounds} alternating rounds of ${modes.map(m => `${m.total / COUNTS.rounds} ${m.name}`).join(' + ')} per target`,
  );
  const results = await measureCalls({
    targets,
    modes,
    rounds: COUNTS.rounds,
    onRound: r => log(`${section}: round ${r} done`),
  });
  for (const client of Object.values(clients)) await client.close();
  return { modes, results };
}

/**
 * The table of a tools/call measurement (per mode and target: calls, calls/s, p50/p99 and the
 * CPU per call of each process in `processes`) and the summary the ratio table reads.
 */
function callTable(results, modes, targets, processes) {
  const rows = [];
  const summary = {};
  for (const mode of modes) {
    for (const target of targets) {
      const entry = results[mode.name][target.name];
      const stats = summarize(entry.latencies);
      const callsPerSecond = (entry.calls / entry.wallMs) * 1000;
      summary[`${mode.name}/${target.name}`] = {
        ...stats,
        callsPerSecond,
        cpu: entry.cpuMs,
        calls: entry.calls,
      };
      rows.push([
        mode.name,
        target.name,
        count(entry.calls),
        callsPerSecond.toFixed(0),
        ms(stats.p50),
        ms(stats.p99),
        ...processes.map(label =>
          entry.cpuMs[label] === undefined ? '' : (entry.cpuMs[label] / entry.calls).toFixed(2),
        ),
      ]);
    }
  }
  const table = markdownTable(
    [
      'mode',
      'target',
      'calls',
      'calls/s',
      'p50 ms',
      'p99 ms',
      ...processes.map(p => `CPU ms/call: ${p}`),
    ],
    rows,
  );
  return { table, summary };
}

/**
 * Each broker figure next to the same figure for the pipe relay, judged against issue #21's
 * targets: throughput ÷ direct (and ÷ mcp-hub when `hub`), sequential p50 overhead, the relay
 * process's CPU per call (and the broker's with the static token when `staticToken`).
 */
function relayTable(summary, { hub = false, staticToken = false } = {}) {
  const concurrent = `${COUNTS.inFlight} in flight`;
  const c = name => summary[`${concurrent}/${name}`];
  const s = name => summary[`sequential/${name}`];
  // Each measure for a relay (`broker`, or the pipe floor beside it), judged for the broker.
  const vsDirect = name => c(name).callsPerSecond / c('direct').callsPerSecond;
  const vsHub = name => c(name).callsPerSecond / c('mcp-hub').callsPerSecond;
  const overhead = name => s(name).p50 - s('direct').p50;
  // The relay's own process: the backend for the broker, bench/pipeRelay.mjs for the pipe.
  const relayCpu = (entry, name) =>
    entry(name).cpu[name.startsWith('broker') ? 'broker' : name] / entry(name).calls;
  const relayRow = (measure, value, format, target, ok) => [
    measure,
    format(value('broker')),
    format(value('pipe')),
    target,
    verdict(ok(value('broker'))),
  ];
  const times = value => `${value.toFixed(2)}×`;
  const millis = value => `${value.toFixed(2)} ms`;
  const rows = [
    relayRow(
      `÷ direct throughput, ${concurrent}`,
      vsDirect,
      times,
      `≥ ${TARGETS.throughputVsDirect}×`,
      value => value >= TARGETS.throughputVsDirect,
    ),
    ...(hub
      ? [
          relayRow(
            `÷ mcp-hub throughput, ${concurrent}`,
            vsHub,
            times,
            `≥ ${TARGETS.throughputVsHub}×`,
            value => value >= TARGETS.throughputVsHub,
          ),
        ]
      : []),
    relayRow(
      'sequential p50 overhead (− direct)',
      overhead,
      millis,
      `≤ ${TARGETS.sequentialOverheadMs} ms`,
      value => value <= TARGETS.sequentialOverheadMs,
    ),
    relayRow(
      'relay process CPU per call, sequential',
      name => relayCpu(s, name),
      millis,
      `≤ ${TARGETS.brokerCpuMsPerCall} ms`,
      value => value <= TARGETS.brokerCpuMsPerCall,
    ),
    relayRow(
      `relay process CPU per call, ${concurrent}`,
      name => relayCpu(c, name),
      millis,
      `≤ ${TARGETS.brokerCpuMsPerCall} ms`,
      value => value <= TARGETS.brokerCpuMsPerCall,
    ),
  ];
  if (staticToken) {
    rows.push([
      `relay process CPU per call with the static token, sequential / ${concurrent}`,
      `${[s, c].map(entry => relayCpu(entry, 'broker, static token').toFixed(2)).join(' / ')} ms`,
      '',
      '',
      '',
    ]);
  }
  const lines = [
    markdownTable(
      ['measure', 'broker', 'pipe (floor)', 'target (broker)', 'result (broker)'],
      rows,
    ),
    '',
  ];
  if (hub)
    lines.push(`mcp-hub ÷ direct throughput, ${concurrent}: ${times(vsDirect('mcp-hub'))}.`, '');
  return lines;
}

const CPU_NOTE =
  'CPU per call is each process\'s utime+stime delta (/proc/<pid>/stat; the load generator from process.cpuUsage()) over its own runs, divided by their calls. "broker" is the whole Backstage backend process.';

/** tools/call echo: direct vs the pipe relay vs broker vs mcp-hub. */
async function callsSection({ everything, pipe, hub, broker, token }) {
  log('calls: connecting SDK clients');
  const clients = {
    direct: await connectClient({ url: everything.url }),
    pipe: await connectClient({ url: pipe.url }),
    broker: await connectClient({ url: broker.url, token }),
    'mcp-hub': await connectClient({ url: hub.url, kind: 'sse' }),
    // app-config.yaml's development static token: a string compare instead of verifying a
    // signed user token, which shows what authentication costs per call.
    'broker, static token': await connectClient({ url: broker.url, token: STATIC_TOKEN }),
  };
  const pids = {
    'server-everything': everything.pid,
    broker: broker.pid,
    pipe: pipe.pid,
    'mcp-hub': hub.pid,
  };
  const targets = await echoTargets(clients, name => {
    const targetPids = { 'server-everything': pids['server-everything'] };
    const gateway = name.startsWith('broker') ? 'broker' : name;
    if (gateway !== 'direct') targetPids[gateway] = pids[gateway];
    return targetPids;
  });
  const { modes, results } = await measureThenClose('calls', clients, targets);

  const processes = ['server-everything', 'broker', 'pipe', 'mcp-hub', 'load generator'];
  const { table, summary } = callTable(results, modes, targets, processes);
  return [
    '### tools/call `echo` (server-everything, official SDK client, one session per target)',
    '',
    '"pipe" is bench/pipeRelay.mjs in front of server-everything (node:http, keep-alive agent, no parsing: the floor of any relay). "broker" uses alice\'s user token (a signed JWT; the broker verifies it on a session\'s first request and remembers the result, see VerifiedPrincipalCache); "broker, static token" the development static token of app-config.yaml. Every request is authenticated. Direct, pipe and mcp-hub have no authentication.',
    '',
    table,
    '',
    CPU_NOTE,
    '',
    ...relayTable(summary, { hub: true, staticToken: true }),
  ];
}

/**
 * tools/call echo for 2026-07-28: the official SDK v2 client pinned to that revision (every
 * call a stateless POST with its own metadata) straight to the modern example server (SDK v2),
 * through the pipe relay, and through the broker (alice's token; a modern backend gets
 * stateless calls from the broker too).
 */
async function modernSection({ modern, modernPipe, broker, token }) {
  log('modern: connecting SDK v2 clients (2026-07-28)');
  const clients = {
    direct: await connectModernClient({ url: modern.url }),
    pipe: await connectModernClient({ url: modernPipe.url }),
    broker: await connectModernClient({ url: broker.url, token }),
  };
  const targets = await echoTargets(
    clients,
    name =>
      name === 'direct'
        ? { 'example-modern': modern.pid }
        : { 'example-modern': modern.pid, [name]: name === 'broker' ? broker.pid : modernPipe.pid },
    // The broker lists every backend's echo; this one is the modern server's.
    name => (name === 'broker' ? 'example-modern_echo' : 'echo'),
  );
  const { modes, results } = await measureThenClose('modern', clients, targets);

  const processes = ['example-modern', 'broker', 'pipe', 'load generator'];
  const { table, summary } = callTable(results, modes, targets, processes);
  return [
    '### tools/call `echo`, 2026-07-28 (SDK v2 client → modern example server, stateless)',
    '',
    '"direct" is the official SDK v2 client (`@modelcontextprotocol/client`, pinned to 2026-07-28: every call one stateless POST carrying its metadata, no session) straight to the modern example server (`packages/example-mcp-server/src/modernServer.ts`, SDK v2 `createMcpHandler`); "pipe" the same client through bench/pipeRelay.mjs; "broker" the same client through the broker with alice\'s token (the broker calls the modern backend statelessly too, with its own credentials and the client\'s capabilities). The direct and pipe targets have no authentication.',
    '',
    table,
    '',
    CPU_NOTE,
    '',
    ...relayTable(summary),
  ];
}

/** Fan-out of one backend tools/list_changed to N open GET streams, then RSS per session. */
async function fanoutAndMemorySection({ broker, example, token }) {
  const lines = [];
  const trigger = await connectClient({ url: example.url });
  const inspector = await connectInspector(inspectorUrl(broker.backend.output()));
  const settledMemory = async () => {
    await inspector.gc();
    return { rss: rssKiB(broker.pid), heap: await inspector.heapUsedKiB() };
  };
  let added = 0;
  const fanoutRows = [];
  const memoryRows = [];
  const sizes = only.has('fanout') ? COUNTS.fanout : [COUNTS.memory];
  for (const n of sizes) {
    const measureMemory = only.has('memory') && n === COUNTS.memory;
    await sleep(1000);
    const baseline = await settledMemory();
    const set = new RawSessionSet(broker.url, token);
    try {
      log(`fanout: opening ${count(n)} sessions with GET streams`);
      const openStarted = performance.now();
      await set.open(n);
      const openSeconds = (performance.now() - openStarted) / 1000;
      await sleep(smoke ? 500 : 3000);
      const rawWithSessions = rssKiB(broker.pid);
      const withSessions = await settledMemory();
      if (only.has('fanout')) {
        const latencies = [];
        let delivered = 0;
        for (let t = 0; t < COUNTS.triggers; t += 1) {
          set.resetReceipts();
          // Past the broker's coalescing window (250 ms), so this notification goes out at once.
          await sleep(1000);
          added += 1;
          const t0 = performance.now();
          await trigger.callTool({ name: 'add_tool', arguments: { name: `bench_tool_${added}` } });
          const received = await set.waitForAll(30_000);
          delivered += received;
          for (const session of set.sessions)
            if (session.receivedAt !== undefined) latencies.push(session.receivedAt - t0);
        }
        const stats = summarize(latencies);
        const target = TARGETS.fanoutP99Ms[n];
        fanoutRows.push([
          count(n),
          COUNTS.triggers,
          `${count(delivered)} / ${count(n * COUNTS.triggers)}`,
          ms(stats.min),
          ms(stats.p50),
          ms(stats.p99),
          ms(stats.max),
          target ? `p99 ≤ ${target} ms` : '',
          target ? verdict(stats.p99 <= target && delivered === n * COUNTS.triggers) : '',
          openSeconds.toFixed(1),
        ]);
      }
      log(`fanout: deleting ${count(n)} sessions`);
      const deleted = await set.closeAll();
      await sleep(smoke ? 1000 : 3000);
      const after = await settledMemory();
      if (measureMemory) {
        const perSession = (withSessions.rss - baseline.rss) / n;
        const mib = kib => `${(kib / 1024).toFixed(0)} MiB`;
        const signedMib = kib => `${kib >= 0 ? '+' : ''}${(kib / 1024).toFixed(1)} MiB`;
        memoryRows.push([
          count(n),
          mib(baseline.rss),
          `${mib(withSessions.rss)} (${mib(rawWithSessions)} before GC)`,
          `${perSession.toFixed(1)} KiB`,
          `${((withSessions.heap - baseline.heap) / n).toFixed(1)} KiB`,
          n >= 1000
            ? `≤ ${TARGETS.rssPerSessionKiB} KiB: ${verdict(perSession <= TARGETS.rssPerSessionKiB)}`
            : '',
          `${count(deleted)}`,
          `${mib(after.rss)} (${signedMib(after.rss - baseline.rss)})`,
          signedMib(after.heap - baseline.heap),
        ]);
      }
    } finally {
      set.destroy();
    }
  }
  await trigger.close();
  inspector.close();
  if (fanoutRows.length) {
    lines.push(
      '### Fan-out: one backend `tools/list_changed` to N open GET streams',
      '',
      'Raw HTTP clients (initialize + GET per session) in the load generator; latency from just before the example server\'s `add_tool` call to the arrival of `notifications/tools/list_changed` on each stream (it includes the broker re-listing the backend\'s tools first). "first" is the earliest delivery of any trigger: the fixed part before the broker writes to the streams.',
      '',
      markdownTable(
        [
          'streams',
          'triggers',
          'delivered',
          'first ms',
          'p50 ms',
          'p99 ms',
          'max ms',
          'target',
          'result',
          'open all s',
        ],
        fanoutRows,
      ),
      '',
    );
  }
  if (memoryRows.length) {
    lines.push(
      '### Memory: broker backend RSS per idle client session (each with its open GET stream)',
      '',
      markdownTable(
        [
          'sessions',
          'RSS before',
          'RSS with sessions',
          'RSS per session',
          'V8 heap per session',
          'target',
          'DELETE 204',
          'RSS after DELETE (vs before)',
          'V8 heap after DELETE (vs before)',
        ],
        memoryRows,
      ),
      '',
      'Every reading follows two full garbage collections forced through the backend\'s inspector (it runs with `--inspect=127.0.0.1:0`); "before GC" is the raw reading. RSS counts the whole Backstage backend; the kernel\'s socket buffers are not in it.',
      '',
    );
  }
  return lines;
}

/** The example server's `confirm` tool (one elicitation round trip) through the broker vs direct. */
async function elicitationSection({ broker, example, token }) {
  const accept = async () => ({ action: 'accept', content: { confirmed: true } });
  const clients = {
    direct: await connectClient({ url: example.url, capabilities: { elicitation: {} } }),
    broker: await connectClient({ url: broker.url, token, capabilities: { elicitation: {} } }),
  };
  const targets = [];
  for (const [name, client] of Object.entries(clients)) {
    client.setRequestHandler(ElicitRequestSchema, accept);
    const tool = await findTool(client, 'confirm');
    const call = async () => {
      const result = await client.callTool({ name: tool, arguments: { question: 'Ship it?' } });
      if (result.structuredContent?.action !== 'accept')
        throw new Error(`unexpected result ${JSON.stringify(result)}`);
    };
    for (let i = 0; i < (smoke ? 2 : 20); i += 1) await call();
    targets.push({
      name,
      call,
      pids:
        name === 'broker' ? { example: example.pid, broker: broker.pid } : { example: example.pid },
    });
  }
  log(`elicitation: ${COUNTS.elicitation} sequential round trips per target`);
  const results = await measureCalls({
    targets,
    modes: [{ name: 'sequential', total: COUNTS.elicitation, concurrency: 1 }],
    rounds: COUNTS.rounds,
  });
  for (const client of Object.values(clients)) await client.close();
  const rows = targets.map(({ name }) => {
    const entry = results.sequential[name];
    const stats = summarize(entry.latencies);
    return [
      name,
      count(entry.calls),
      ms(stats.p50),
      ms(stats.p99),
      entry.cpuMs.broker === undefined ? '' : (entry.cpuMs.broker / entry.calls).toFixed(2),
    ];
  });
  const p50 = name => summarize(results.sequential[name].latencies).p50;
  return [
    '### Elicitation round trip: `confirm` (tools/call → elicitation/create → answer → result)',
    '',
    markdownTable(['target', 'round trips', 'p50 ms', 'p99 ms', 'broker CPU ms/round trip'], rows),
    '',
    `Broker overhead at p50: ${(p50('broker') - p50('direct')).toFixed(2)} ms per round trip (two client→server POSTs and one SSE response each).`,
    '',
  ];
}

/** The broker's count of permission-service calls so far (GET /status, read as carol). */
async function authorizeCalls(broker, adminToken) {
  const response = await fetch(`${broker.backend.baseUrl}/api/mcp-broker/status`, {
    headers: { Authorization: `Bearer ${adminToken}` },
  });
  if (!response.ok) throw new Error(`GET /status answered ${response.status}`);
  return (await response.json()).permissions.authorizeCalls;
}

/**
 * tools/call `everything_echo` as alice (the fixture's conditional tool policy, applied in the
 * broker to each catalog item) vs carol (a policy that allows everything), in one backend and
 * alternating rounds; and how many permission-service calls the whole run cost.
 */
async function permissionsSection({ broker, token, adminToken }) {
  const clients = {
    'alice (conditional policy)': await connectClient({ url: broker.url, token }),
    'carol (allows everything)': await connectClient({ url: broker.url, token: adminToken }),
  };
  const targets = [];
  for (const [name, client] of Object.entries(clients)) {
    const call = () =>
      client.callTool({ name: 'everything_echo', arguments: { message: 'hello' } });
    for (let i = 0; i < (smoke ? 5 : 100); i += 1) await call();
    targets.push({ name, call, pids: { broker: broker.pid } });
  }
  const modes = callModes();
  // Two targets doing the same per-call work: many short alternating rounds, so that the
  // machine's background load (other jobs) lands on both alike.
  const rounds = smoke ? COUNTS.rounds : 20;
  log(`permissions: ${rounds} alternating rounds per target`);
  const authorizeBefore = await authorizeCalls(broker, adminToken);
  const started = performance.now();
  const results = await measureCalls({ targets, modes, rounds });
  const seconds = (performance.now() - started) / 1000;
  const authorizeDuring = (await authorizeCalls(broker, adminToken)) - authorizeBefore;
  for (const client of Object.values(clients)) await client.close();

  let toolCalls = 0;
  const rows = [];
  const callsPerSecond = {};
  for (const mode of modes) {
    for (const { name } of targets) {
      const entry = results[mode.name][name];
      const stats = summarize(entry.latencies);
      toolCalls += entry.calls;
      callsPerSecond[`${mode.name}/${name}`] = (entry.calls / entry.wallMs) * 1000;
      rows.push([
        mode.name,
        name,
        count(entry.calls),
        callsPerSecond[`${mode.name}/${name}`].toFixed(0),
        ms(stats.p50),
        ms(stats.p99),
        (entry.cpuMs.broker / entry.calls).toFixed(2),
      ]);
    }
  }
  const [conditional, allowAll] = targets.map(t => t.name);
  const ratio = mode =>
    callsPerSecond[`${mode.name}/${conditional}`] / callsPerSecond[`${mode.name}/${allowAll}`];
  const perThousand = (authorizeDuring / toolCalls) * 1000;
  return [
    '### Permissions: tools/call `everything_echo` with the fixture policy vs a policy that allows everything',
    '',
    `One backend, one session per user, ${rounds} alternating rounds. ` +
      "Alice holds the development fixture's `mcp-user` role (a CONDITIONAL decision for `mcp-broker.tool.use`, applied in the broker to every catalog item); carol holds `portal-admin` (ALLOW for every `mcp-broker.*` permission). Both go through the same decision cache (one permission round trip per user and catalog version, at most 30 s old).",
    '',
    markdownTable(
      ['mode', 'target', 'calls', 'calls/s', 'p50 ms', 'p99 ms', 'broker CPU ms/call'],
      rows,
    ),
    '',
    markdownTable(
      ['measure', 'value', 'target', 'result'],
      [
        ...modes.map(mode => [
          `throughput with permissions ÷ allow-everything, ${mode.name}`,
          `${ratio(mode).toFixed(2)}×`,
          mode.concurrency > 1 ? `≥ ${TARGETS.permissionsThroughputRatio}×` : '',
          mode.concurrency > 1 ? verdict(ratio(mode) >= TARGETS.permissionsThroughputRatio) : '',
        ]),
        [
          'permission-service calls per 1,000 tool calls',
          `${perThousand.toFixed(2)} (${authorizeDuring} calls for ${count(toolCalls)} tool calls in ${seconds.toFixed(0)} s)`,
          '≤ 2 users × (1 + run seconds ÷ 30) in total',
          verdict(authorizeDuring <= 2 * (1 + Math.ceil(seconds / 30)) + 1),
        ],
      ],
    ),
    '',
  ];
}

/**
 * The cost of telemetry and rate limits: tools/call `everything_echo` as alice through a second
 * backend that loads the development instrumentation (OpenTelemetry SDK: every request's spans
 * kept, metrics read by a scrape of its /metrics every 5 s, as Prometheus would) and counts every
 * call against a per-person limit too high to refuse anything, vs the first backend (no SDK, no
 * limit), side by side in many short alternating rounds.
 */
async function telemetrySection({ servers, broker, token }) {
  log('telemetry: starting a second backend with OpenTelemetry and a non-binding rate limit');
  const [observed] = await startAll([startBrokerBackend(servers, [], logLevel, OBSERVED_BACKEND)]);
  const observedToken = await observed.backend.signIn('alice');
  await waitForBrokerBackends(observed.backend, await observed.backend.signIn('carol'), [
    'everything',
  ]);
  const telemetryUrl = observed.backend.telemetryUrl();
  if (telemetryUrl === undefined) throw new Error('the second backend printed no telemetry page');
  let scrapes = 0;
  const scrape = async () => {
    const text = await fetch(`${telemetryUrl}/metrics`).then(r => r.text());
    scrapes += 1;
    return text;
  };
  const scraper = setInterval(() => void scrape().catch(() => undefined), 5_000);
  const names = { off: 'all off', on: 'metrics + traces + limit' };
  const clients = {
    [names.off]: await connectClient({ url: broker.url, token }),
    [names.on]: await connectClient({ url: observed.url, token: observedToken }),
  };
  const pids = { [names.off]: broker.pid, [names.on]: observed.pid };
  const targets = [];
  for (const [name, client] of Object.entries(clients)) {
    const call = () =>
      client.callTool({ name: 'everything_echo', arguments: { message: 'hello' } });
    for (let i = 0; i < (smoke ? 5 : 200); i += 1) await call();
    targets.push({ name, call, pids: { backend: pids[name] } });
  }
  const modes = callModes();
  const rounds = smoke ? COUNTS.rounds : 20;
  const loadBefore = loadAverage();
  log(`telemetry: ${rounds} alternating rounds per target`);
  let results;
  try {
    results = await measureCalls({ targets, modes, rounds });
  } finally {
    clearInterval(scraper);
  }
  const loadAfter = loadAverage();
  for (const client of Object.values(clients)) await client.close();
  // What the observed backend reported: its tools/call count on /metrics, and its spans.
  const metrics = await scrape();
  const counted = metrics
    .split('\n')
    .filter(
      line =>
        line.startsWith('mcp_server_operation_duration_count{') &&
        line.includes('mcp_method_name="tools/call"'),
    )
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  const traces = await fetch(`${telemetryUrl}/traces`).then(r => r.json());

  const { table, summary } = callTable(results, modes, targets, ['backend']);
  const of = (mode, name) => {
    const entry = summary[`${mode.name}/${name}`];
    return { ...entry, cpuPerCall: entry.cpu.backend / entry.calls };
  };
  const ratio = mode => of(mode, names.on).callsPerSecond / of(mode, names.off).callsPerSecond;
  const concurrent = modes.find(mode => mode.concurrency > 1);
  const sequential = modes.find(mode => mode.concurrency === 1);
  await observed.backend.stop();
  return [
    `### Telemetry and rate limits: tools/call \`everything_echo\`, ${names.on} vs ${names.off}`,
    '',
    `Two backends side by side, both pointed at the same servers, alice's token on each, ${rounds} alternating rounds. "${names.on}" loads packages/backend/src/instrumentation.ts (OpenTelemetry Node SDK: a SERVER and a CLIENT span per call, kept by the always-on sampler and exported in batches to the in-memory trace page; the MCP histograms, counters and gauges, read by a scrape of /metrics every 5 s) and counts every call against \`mcpBroker.rateLimits.default\` (10⁹ per minute: never refuses). "${names.off}" is the first backend: no SDK (the OpenTelemetry API's no-ops), no limit. Load average ${loadBefore} before and ${loadAfter} after the section (2 cores shared with other jobs).`,
    '',
    table,
    '',
    markdownTable(
      ['measure', 'value', 'target', 'result'],
      [
        [
          `throughput ${names.on} ÷ ${names.off}, ${concurrent.name}`,
          `${ratio(concurrent).toFixed(3)}×`,
          `≥ ${TARGETS.telemetryThroughputRatio}×`,
          verdict(ratio(concurrent) >= TARGETS.telemetryThroughputRatio),
        ],
        [
          `throughput ${names.on} ÷ ${names.off}, sequential`,
          `${ratio(sequential).toFixed(3)}×`,
          '',
          '',
        ],
        [
          'sequential p50 overhead',
          `${(of(sequential, names.on).p50 - of(sequential, names.off).p50).toFixed(2)} ms`,
          '',
          '',
        ],
        [
          `backend CPU per call, ${concurrent.name}`,
          `${of(concurrent, names.on).cpuPerCall.toFixed(3)} vs ${of(concurrent, names.off).cpuPerCall.toFixed(3)} ms (+${(of(concurrent, names.on).cpuPerCall - of(concurrent, names.off).cpuPerCall).toFixed(3)} ms)`,
          '',
          '',
        ],
      ],
    ),
    '',
    `The observed backend's /metrics counted ${count(counted)} tools/call requests (warm-up included; ${scrapes} scrapes), and its trace page held ${traces.length} recent traces.`,
    '',
  ];
}

/**
 * The cost of presenting each person's own identity (spec §11): tools/call `whoami` as alice on
 * the same whoami server through two server entries — `whoami` in broker mode (the static token)
 * and `whoami-exchange` in tokenExchange mode (alice's exchanged token: the first call exchanges,
 * every later one is a cache hit) — in one backend, alternating rounds. The whoami server runs in
 * this process (it verifies each exchanged JWT, so its CPU is the load generator's, not the
 * broker's).
 */
async function identitySection({ broker, token, identity }) {
  const client = await connectClient({ url: broker.url, token });
  const targets = [];
  for (const [name, tool] of [
    ['broker mode (static token)', 'whoami_whoami'],
    ['tokenExchange (cache hit)', 'whoami-exchange_whoami'],
  ]) {
    const call = async () => {
      const result = await client.callTool({ name: tool });
      if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
    };
    for (let i = 0; i < (smoke ? 5 : 100); i += 1) await call();
    targets.push({ name, call, pids: { broker: broker.pid } });
  }
  // After the warm-up, which obtained alice's token (one exchange).
  const exchangesBefore = identity.sts.exchanges.length;
  // Two targets doing nearly the same work: many short alternating rounds, so that the machine's
  // background load lands on both alike (as in the permissions section).
  const modes = callModes();
  const rounds = smoke ? COUNTS.rounds : 20;
  log(`identity: ${rounds} alternating rounds per target`);
  const results = await measureCalls({ targets, modes, rounds });
  await client.close();
  const exchanges = identity.sts.exchanges.length - exchangesBefore;
  const { table, summary } = callTable(results, modes, targets, ['broker', 'load generator']);
  const [plain, exchanged] = targets.map(t => t.name);
  const rows = modes.flatMap(mode => {
    const a = summary[`${mode.name}/${plain}`];
    const b = summary[`${mode.name}/${exchanged}`];
    return [
      [
        `broker CPU per call, tokenExchange ÷ broker mode, ${mode.name}`,
        `${(b.cpu.broker / b.calls / (a.cpu.broker / a.calls)).toFixed(2)}× (${(b.cpu.broker / b.calls).toFixed(2)} vs ${(a.cpu.broker / a.calls).toFixed(2)} ms)`,
      ],
      [
        `throughput, tokenExchange ÷ broker mode, ${mode.name}`,
        `${(b.callsPerSecond / a.callsPerSecond).toFixed(2)}×`,
      ],
      [`p50 latency added, ${mode.name}`, `${(b.p50 - a.p50).toFixed(2)} ms`],
    ];
  });
  return [
    '### Identity: tools/call `whoami` in broker mode vs with the person’s exchanged token (cache hit)',
    '',
    `One backend, one session as alice, ${rounds} alternating rounds; the same whoami server behind two entries. Token exchanges during the measured calls: ${exchanges} (the token was obtained during warm-up and then served from the broker's cache).`,
    '',
    table,
    '',
    markdownTable(['measure', 'value'], rows),
    '',
  ];
}

/**
 * A CPU profile of the backend over `COUNTS.profiled` echo calls at 50 in flight through the
 * broker as alice, taken through the backend's inspector (start-up and warm-up excluded, 100 µs
 * sampling), written to --profile-out (default: a temporary file) and summed per call.
 */
async function profileSection({ broker, token }) {
  const modern = profileEra === 'modern';
  const client = await (modern ? connectModernClient : connectClient)({ url: broker.url, token });
  const tool = await findTool(client, modern ? 'example-modern_echo' : 'echo');
  const call = () => client.callTool({ name: tool, arguments: { message: 'hello' } });
  const mode = { name: 'profiled', total: COUNTS.profiled, concurrency: COUNTS.inFlight };
  const target = { name: 'broker', call, pids: { broker: broker.pid } };
  log(`profile: warm-up, then ${count(COUNTS.profiled)} calls under the CPU profiler`);
  await measureCalls({ targets: [target], modes: [{ ...mode, total: mode.total / 5 }], rounds: 1 });
  const inspector = await connectInspector(inspectorUrl(broker.backend.output()));
  await inspector.send('Profiler.enable');
  await inspector.send('Profiler.setSamplingInterval', { interval: 100 });
  await inspector.send('Profiler.start');
  const results = await measureCalls({ targets: [target], modes: [mode], rounds: 1 });
  const { profile } = await inspector.send('Profiler.stop');
  inspector.close();
  await client.close();
  const file =
    profileOut ??
    path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'broker-profile-')), 'broker.cpuprofile');
  fs.writeFileSync(file, JSON.stringify(profile));
  const { calls, cpuMs, wallMs } = results.profiled.broker;
  const cpuPerCall = (cpuMs.broker / calls).toFixed(2);
  const callsPerSecond = ((calls / wallMs) * 1000).toFixed(0);
  return [
    `### Where a tool call's CPU goes: backend profile over ${count(calls)} ` +
      `${modern ? '2026-07-28 ' : ''}echo calls at ${COUNTS.inFlight} in flight`,
    '',
    `Backend CPU (all threads, /proc) under the profiler: ${cpuPerCall} ms per call; ` +
      `${callsPerSecond} calls/s. Profile: \`${file}\` ` +
      `(\`node bench/profileSummary.mjs ${file} --calls ${calls}\`).`,
    '',
    ...profileSummaryLines(profile, { calls }),
  ];
}

main().catch(error => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
