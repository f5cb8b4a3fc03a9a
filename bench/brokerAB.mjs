/*
 * Broker A/B: two or more builds of the repository (e.g. a change and its parent) measured in
 * ONE run, so that a change's effect is not lost in the drift between runs on a shared machine.
 * Each variant is a checkout with its node_modules (a `cp -al` copy of a worktree whose
 * `plugins/mcp-broker-backend/src` is replaced by the parent's works: Yarn's workspace links
 * are relative, so each copy runs its own plugin source). One development backend per variant,
 * all pointed at the same MCP server, plus two references: that server reached directly and
 * through the pipe relay (bench/pipeRelay.mjs, the floor of any relay). `tools/call echo` as
 * alice (permissions on), sequential and at 50 in flight, in alternating rounds (order rotated
 * per round, see lib/brokerCalls.mjs).
 *
 * `--era legacy` (default): the official SDK client with a session, server-everything behind.
 * `--era modern`: the SDK v2 client pinned to 2026-07-28 (stateless POSTs), the modern example
 * server behind (`example-modern_echo` through the broker).
 *
 * Prints, per mode and target: calls/s, p50/p99, the relay process's CPU per call (the broker's
 * backend, or the pipe), the client's (this process), and the medians over rounds of ratios
 * taken within each round, which drift on a shared machine disturbs least: throughput ÷ direct
 * and ÷ pipe, relay CPU ÷ the pipe's, ÷ the first variant's and ÷ the variant listed before it.
 * List a variant twice (e.g. `base=…,change=…,base-again=…`) for an A/A control: the spread
 * between the two copies of one build is the run's noise.
 *
 *   node bench/brokerAB.mjs --variants parent=/tmp/ab/parent,change=. [--era legacy|modern]
 *     [--rounds 8] [--sequential 800] [--concurrent 4000] [--in-flight 50] [--smoke]
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { count, markdownTable, median, ms, summarize } from './lib/stats.mjs';
import {
  startExampleServer,
  startPipeRelay,
  startServerEverything,
} from './lib/brokerProcesses.mjs';
import { connectClient, connectModernClient } from './lib/mcpClients.mjs';
import { measureCalls, warmEchoTarget } from './lib/brokerCalls.mjs';
import { processStoppers, runBench } from './lib/processStoppers.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const argValue = name => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const smoke = args.includes('--smoke');
const variants = (argValue('--variants') ?? '').split(',').filter(Boolean);
const era = argValue('--era') ?? 'legacy';
if (variants.length === 0 || !['legacy', 'modern'].includes(era)) {
  process.stderr.write(
    'usage: node bench/brokerAB.mjs --variants name=dir,name=dir [--era legacy|modern] [...]\n',
  );
  process.exit(2);
}
const COUNTS = {
  rounds: Number(argValue('--rounds') ?? (smoke ? 2 : 8)),
  sequential: Number(argValue('--sequential') ?? (smoke ? 20 : 800)),
  concurrent: Number(argValue('--concurrent') ?? (smoke ? 40 : 4000)),
  inFlight: Number(argValue('--in-flight') ?? (smoke ? 10 : 50)),
};
const log = message => process.stderr.write(`[broker-ab] ${message}\n`);

const { stoppers, stopAll } = processStoppers(log);

/** The MCP server of the era, the broker's name for it and the echo tool's name through it. */
const ERA = {
  legacy: {
    start: () => startServerEverything(),
    serverName: 'everything',
    connect: connectClient,
    brokerTool: 'echo',
  },
  modern: {
    start: () => startExampleServer('src/modernMain.ts'),
    serverName: 'example-modern',
    connect: connectModernClient,
    brokerTool: 'example-modern_echo',
  },
}[era];

/** The development backend of the checkout at `root`, its broker pointed at `serverUrl`. */
async function startVariant(root, serverUrl) {
  const { startBackendProcess } = require(
    path.resolve(root, 'packages/backend/src/testing/startBackendProcess.ts'),
  );
  const backend = await startBackendProcess({
    config: { mcpBroker: { servers: [{ name: ERA.serverName, url: serverUrl }] } },
    env: { LOG_LEVEL: 'warn' },
    startTimeoutMs: 180_000,
  });
  stoppers.push(() => backend.stop());
  return { backend, pid: backend.pid, url: `${backend.baseUrl}/api/mcp-broker/mcp` };
}

async function main() {
  const started = performance.now();
  const loadBefore = loadAverage();
  const output = [];
  const server = await ERA.start();
  stoppers.push(() => server.stop());
  const pipe = await startPipeRelay(server.url);
  stoppers.push(() => pipe.stop());
  const targets = [];
  const clients = [];
  const addTarget = async (name, client, tool, pids) => {
    clients.push(client);
    targets.push(await warmEchoTarget({ name, client, tool, pids, warmUp: smoke ? 5 : 200 }));
  };
  await addTarget('direct', await ERA.connect({ url: server.url }), 'echo', {
    server: server.pid,
  });
  await addTarget('pipe', await ERA.connect({ url: pipe.url }), 'echo', {
    server: server.pid,
    relay: pipe.pid,
  });
  for (const variant of variants) {
    const [name, dir] = variant.split('=');
    log(`starting the backend of ${name} (${path.resolve(dir)})`);
    const broker = await startVariant(dir, server.url);
    const token = await broker.backend.signIn('alice');
    const client = await ERA.connect({ url: broker.url, token });
    await addTarget(name, client, ERA.brokerTool, { server: server.pid, relay: broker.pid });
  }
  const modes = [
    { name: 'sequential', total: COUNTS.sequential, concurrency: 1 },
    {
      name: `${COUNTS.inFlight} in flight`,
      total: COUNTS.concurrent,
      concurrency: COUNTS.inFlight,
    },
  ];
  log(`${COUNTS.rounds} alternating rounds`);
  // One round at a time (order rotated per round), so that each round's figures of every
  // target can be paired with the others' in the same round: the median of those ratios is
  // what drift on a shared machine disturbs least.
  const results = {};
  const perRound = {};
  for (let round = 0; round < COUNTS.rounds; round += 1) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    const roundModes = modes.map(mode => ({
      ...mode,
      total: Math.ceil(mode.total / COUNTS.rounds),
    }));
    const one = await measureCalls({ targets: order, modes: roundModes, rounds: 1 });
    for (const mode of modes) {
      results[mode.name] ??= {};
      perRound[mode.name] ??= {};
      for (const target of targets) {
        const entry = one[mode.name][target.name];
        const sum = (results[mode.name][target.name] ??= {
          latencies: [],
          wallMs: 0,
          calls: 0,
          cpuMs: {},
        });
        sum.latencies.push(...entry.latencies);
        sum.wallMs += entry.wallMs;
        sum.calls += entry.calls;
        for (const [label, value] of Object.entries(entry.cpuMs))
          sum.cpuMs[label] = (sum.cpuMs[label] ?? 0) + value;
        (perRound[mode.name][target.name] ??= []).push({
          cpu: (entry.cpuMs.relay ?? 0) / entry.calls,
          rate: entry.calls / entry.wallMs,
          p50: summarize(entry.latencies).p50,
        });
      }
    }
    log(`round ${round + 1} done`);
  }
  /** Median over rounds of `pick(name) ÷ pick(base)` within each round. */
  const pairedRatio = (mode, name, base, pick) =>
    median(perRound[mode][name].map((r, i) => pick(r) / pick(perRound[mode][base][i])));
  /** Median over rounds of `pick(name) − pick(base)` within each round. */
  const pairedDifference = (mode, name, base, pick) =>
    median(perRound[mode][name].map((r, i) => pick(r) - pick(perRound[mode][base][i])));
  for (const client of clients) await client.close();

  const facts = machineFacts();
  output.push(
    `Machine: ${facts.nproc} cores, ${facts.cpuModel}; Node ${facts.node}. Load average before: ${loadBefore}.`,
    `Command: \`node bench/brokerAB.mjs ${args.join(' ')}\`; backend LOG_LEVEL=warn.`,
    '',
  );
  const first = targets[2].name;
  // The variant before this one in --variants (its parent when they are a chain of changes).
  const previous = name => {
    const index = targets.findIndex(target => target.name === name);
    return index > 2 ? targets[index - 1].name : undefined;
  };
  const ratio = value => `${value.toFixed(3)}×`;
  const rows = [];
  for (const mode of modes) {
    const entryOf = name => results[mode.name][name];
    const rate = name => (entryOf(name).calls / entryOf(name).wallMs) * 1000;
    for (const target of targets) {
      const { name } = target;
      const entry = entryOf(name);
      const stats = summarize(entry.latencies);
      const relay = name !== 'direct';
      const variant = relay && name !== 'pipe';
      rows.push([
        mode.name,
        name,
        count(entry.calls),
        rate(name).toFixed(0),
        ms(stats.p50),
        ms(stats.p99),
        relay ? (entry.cpuMs.relay / entry.calls).toFixed(3) : '',
        (entry.cpuMs['load generator'] / entry.calls).toFixed(3),
        relay ? ratio(pairedRatio(mode.name, name, 'direct', r => r.rate)) : '',
        variant ? ratio(pairedRatio(mode.name, name, 'pipe', r => r.rate)) : '',
        variant ? `${pairedDifference(mode.name, name, 'pipe', r => r.p50).toFixed(2)}` : '',
        variant ? ratio(pairedRatio(mode.name, name, 'pipe', r => r.cpu)) : '',
        variant && name !== first ? ratio(pairedRatio(mode.name, name, first, r => r.cpu)) : '',
        variant && previous(name) !== undefined
          ? ratio(pairedRatio(mode.name, name, previous(name), r => r.cpu))
          : '',
        variant && name !== first ? ratio(pairedRatio(mode.name, name, first, r => r.rate)) : '',
      ]);
    }
  }
  output.push(
    markdownTable(
      [
        'mode',
        'target',
        'calls',
        'calls/s',
        'p50 ms',
        'p99 ms',
        'relay CPU ms/call',
        'client CPU ms/call',
        'calls/s ÷ direct',
        'calls/s ÷ pipe',
        'p50 − pipe ms',
        'relay CPU ÷ pipe',
        `relay CPU ÷ ${first}`,
        'relay CPU ÷ previous',
        `calls/s ÷ ${first}`,
      ],
      rows,
    ),
    '',
    'Ratios and differences are medians over rounds of the figures within each round.',
    '',
    `Load average after: ${loadAverage()}; run took ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    '',
  );
  return output;
}

runBench(main, stopAll);
