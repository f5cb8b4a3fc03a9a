/*
 * Both eras' call paths and the byte-pipe relay side by side in ONE run, with the broker in the
 * development configuration a new user runs (issue #37): the development backend with the RBAC
 * plugin (alice's fixture policy: a CONDITIONAL `mcp-broker.tool.use`), the development
 * instrumentation (packages/backend/src/instrumentation.ts: OpenTelemetry SDK, every span kept,
 * /metrics) and the rate-limit stage on (`mcpBroker.rateLimits.default`, 10⁹ per minute: every
 * call counted, none refused) — what `node bench/broker.mjs --only telemetry` calls "observed".
 *
 * Targets, measured in alternating rounds (order rotated per round, lib/brokerCalls.mjs):
 * - 2025-11-25: the official SDK client with a session → server-everything, directly, through the
 *   pipe relay (bench/pipeRelay.mjs) and through the broker (`everything_echo`);
 * - 2026-07-28: the SDK v2 client pinned to 2026-07-28 (stateless POSTs) → the modern example
 *   server, directly, through a second pipe relay and through the same broker
 *   (`example-modern_echo`).
 *
 * Prints per target calls/s, p50/p99 and the relay process's CPU per call (the broker's backend
 * or the pipe), then the issue's figures as medians over rounds of ratios taken within each
 * round: each broker path ÷ its pipe, the 2026-07-28 broker path ÷ the 2025 one (raw and
 * normalised by the two pipes: the two eras reach different servers).
 *
 *   node bench/brokerEras.mjs [--rounds 4] [--calls 2000] [--in-flight 50] [--smoke]
 *     [--cpu-prof <dir>]   (the backend's own V8 profile of the whole run, for profileSummary)
 */
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { count, markdownTable, median, ms, summarize } from './lib/stats.mjs';
import {
  startBrokerBackend,
  startExampleServer,
  startPipeRelay,
  startServerEverything,
  waitForBrokerBackends,
} from './lib/brokerProcesses.mjs';
import { connectClient, connectModernClient } from './lib/mcpClients.mjs';
import { measureCalls, warmEchoTarget } from './lib/brokerCalls.mjs';
import { processStoppers, runBench } from './lib/processStoppers.mjs';

const args = process.argv.slice(2);
const argValue = name => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const smoke = args.includes('--smoke');
const COUNTS = {
  rounds: Number(argValue('--rounds') ?? (smoke ? 2 : 4)),
  calls: Number(argValue('--calls') ?? (smoke ? 40 : 2000)),
  inFlight: Number(argValue('--in-flight') ?? (smoke ? 10 : 50)),
};
const cpuProfDir = argValue('--cpu-prof');
const log = message => process.stderr.write(`[broker-eras] ${message}\n`);
const { stoppers, stopAll } = processStoppers(log);

/** What the development configuration turns on besides RBAC (as broker.mjs's "observed"). */
const DEVELOPMENT_CONFIGURATION = {
  instrumentation: true,
  mcpBroker: { rateLimits: { default: { calls: 1_000_000_000, per: { minutes: 1 } } } },
};

async function main() {
  const started = performance.now();
  const loadBefore = loadAverage();
  const output = [];
  const [everything, modern] = await Promise.all([
    startServerEverything(),
    startExampleServer('src/modernMain.ts'),
  ]);
  stoppers.push(
    () => everything.stop(),
    () => modern.stop(),
  );
  const [everythingPipe, modernPipe] = await Promise.all([
    startPipeRelay(everything.url),
    startPipeRelay(modern.url),
  ]);
  stoppers.push(
    () => everythingPipe.stop(),
    () => modernPipe.stop(),
  );
  log('starting the development backend (RBAC, instrumentation, rate-limit stage)');
  const broker = await startBrokerBackend(
    { everything: everything.url, 'example-modern': modern.url },
    cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`],
    'warn',
    DEVELOPMENT_CONFIGURATION,
  );
  stoppers.push(() => broker.backend.stop());
  const token = await broker.backend.signIn('alice');
  await waitForBrokerBackends(broker.backend, await broker.backend.signIn('carol'), [
    'everything',
    'example-modern',
  ]);

  // Per era: its client, its server, the server's pipe and the echo tool's name through the
  // broker; three targets each (direct, pipe, broker).
  const eras = [
    ['2025', connectClient, everything, everythingPipe, 'everything_echo'],
    ['2026', connectModernClient, modern, modernPipe, 'example-modern_echo'],
  ];
  const targets = [];
  const clients = [];
  for (const [era, connect, server, pipe, brokerTool] of eras) {
    const ways = [
      ['direct', { url: server.url }, 'echo', {}],
      ['pipe', { url: pipe.url }, 'echo', { relay: pipe.pid }],
      ['broker', { url: broker.url, token }, brokerTool, { relay: broker.pid }],
    ];
    for (const [way, connection, tool, relay] of ways) {
      const client = await connect(connection);
      clients.push(client);
      targets.push(
        await warmEchoTarget({
          name: `${era} ${way}`,
          client,
          tool,
          pids: { server: server.pid, ...relay },
          warmUp: smoke ? 5 : 200,
        }),
      );
    }
  }

  const mode = { name: `${COUNTS.inFlight} in flight`, concurrency: COUNTS.inFlight };
  const totals = Object.fromEntries(
    targets.map(t => [t.name, { latencies: [], wallMs: 0, calls: 0, relayMs: 0 }]),
  );
  const perRound = Object.fromEntries(targets.map(t => [t.name, []]));
  log(`${COUNTS.rounds} alternating rounds, ${COUNTS.calls} calls per target`);
  for (let round = 0; round < COUNTS.rounds; round += 1) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    const one = await measureCalls({
      targets: order,
      modes: [{ ...mode, total: Math.ceil(COUNTS.calls / COUNTS.rounds) }],
      rounds: 1,
    });
    for (const target of targets) {
      const entry = one[mode.name][target.name];
      const sum = totals[target.name];
      sum.latencies.push(...entry.latencies);
      sum.wallMs += entry.wallMs;
      sum.calls += entry.calls;
      sum.relayMs += entry.cpuMs.relay ?? 0;
      perRound[target.name].push(entry.calls / entry.wallMs);
    }
    log(`round ${round + 1} done`);
  }
  for (const client of clients) await client.close();

  /** Median over rounds of `a ÷ b` (calls/s) within each round. */
  const paired = (a, b) => median(perRound[a].map((rate, i) => rate / perRound[b][i]));
  /** Median over rounds of (a ÷ b) ÷ (c ÷ d) within each round. */
  const pairedOf = (a, b, c, d) =>
    median(perRound[a].map((rate, i) => rate / perRound[b][i] / (perRound[c][i] / perRound[d][i])));
  const x = value => `${value.toFixed(2)}×`;
  const facts = machineFacts();
  output.push(
    `Machine: ${facts.nproc} cores, ${facts.cpuModel}; Node ${facts.node}. Load average before: ${loadBefore}.`,
    `Command: \`node bench/brokerEras.mjs${args.length ? ` ${args.join(' ')}` : ''}\`; the development backend with RBAC (alice), the development instrumentation and the rate-limit stage on; LOG_LEVEL=warn.`,
    '',
    markdownTable(
      ['target', 'calls', 'calls/s', 'p50 ms', 'p99 ms', 'relay CPU ms/call'],
      targets.map(({ name }) => {
        const entry = totals[name];
        const stats = summarize(entry.latencies);
        return [
          name,
          count(entry.calls),
          ((entry.calls / entry.wallMs) * 1000).toFixed(0),
          ms(stats.p50),
          ms(stats.p99),
          name.endsWith('direct') ? '' : (entry.relayMs / entry.calls).toFixed(3),
        ];
      }),
    ),
    '',
    markdownTable(
      ['measure (medians of within-round ratios)', 'value', 'target'],
      [
        ['2025 broker ÷ 2025 pipe', x(paired('2025 broker', '2025 pipe')), '≥ 0.85×'],
        ['2026-07-28 broker ÷ 2026 pipe', x(paired('2026 broker', '2026 pipe')), '≥ 0.85×'],
        ['2026-07-28 broker ÷ 2025 broker (raw)', x(paired('2026 broker', '2025 broker')), '≥ 1×'],
        [
          '(2026 broker ÷ pipe) ÷ (2025 broker ÷ pipe)',
          x(pairedOf('2026 broker', '2026 pipe', '2025 broker', '2025 pipe')),
          '≥ 1×',
        ],
        ['2025 pipe ÷ direct', x(paired('2025 pipe', '2025 direct')), ''],
        ['2026 pipe ÷ direct', x(paired('2026 pipe', '2026 direct')), ''],
      ],
    ),
    '',
    `Load average after: ${loadAverage()}; run took ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    '',
  );
  return output;
}

runBench(main, stopAll);
