#!/usr/bin/env node
/*
 * Broker A/B: two or more builds of the repository (e.g. a change and its parent) measured in
 * ONE run, so that a change's effect is not lost in the drift between runs on a shared machine.
 * Each variant is a checkout with its node_modules (a `cp -al` copy of a worktree whose
 * `plugins/mcp-broker-backend/src` is replaced by the parent's works: Yarn's workspace links
 * are relative, so each copy runs its own plugin source). One development backend per variant,
 * all pointed at the same server-everything, plus the direct target; `tools/call echo` with the
 * official SDK client as alice, sequential and at 50 in flight, in alternating rounds (order
 * rotated per round, see lib/brokerCalls.mjs). Prints, per mode and target: calls/s, p50/p99,
 * the backend's CPU per call, the client's (this process, from process.cpuUsage()), ÷ direct,
 * each variant's CPU and throughput ÷ the first's over the whole run, and the medians over
 * rounds of the same ratios taken within each round (CPU ÷ the first variant, ÷ the variant
 * listed before it, throughput ÷ direct): the figures drift on a shared machine disturbs least.
 *
 *   node bench/brokerAB.mjs --variants parent=/tmp/ab/parent,change=. [--rounds 8]
 *     [--sequential 800] [--concurrent 4000] [--in-flight 50] [--smoke]
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { count, markdownTable, ms, summarize } from './lib/stats.mjs';
import { startServerEverything } from './lib/brokerProcesses.mjs';
import { connectClient, findTool } from './lib/mcpClients.mjs';
import { measureCalls } from './lib/brokerCalls.mjs';
import { processStoppers } from './lib/processStoppers.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const argValue = name => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const smoke = args.includes('--smoke');
const variants = (argValue('--variants') ?? '').split(',').filter(Boolean);
if (variants.length === 0) {
  process.stderr.write('usage: node bench/brokerAB.mjs --variants name=dir,name=dir [...]\n');
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

/** The development backend of the checkout at `root`, its broker pointed at `everythingUrl`. */
async function startVariant(root, everythingUrl) {
  const { startBackendProcess } = require(
    path.resolve(root, 'packages/backend/src/testing/startBackendProcess.ts'),
  );
  const backend = await startBackendProcess({
    config: { mcpBroker: { servers: [{ name: 'everything', url: everythingUrl }] } },
    env: { LOG_LEVEL: 'warn' },
    startTimeoutMs: 120_000,
  });
  stoppers.push(() => backend.stop());
  return { backend, pid: backend.pid, url: `${backend.baseUrl}/api/mcp-broker/mcp` };
}

async function main() {
  const started = performance.now();
  const loadBefore = loadAverage();
  const output = [];
  try {
    const everything = await startServerEverything();
    stoppers.push(() => everything.stop());
    const targets = [];
    const direct = await connectClient({ url: everything.url });
    const clients = [direct];
    const addTarget = async (name, client, pids) => {
      const tool = await findTool(client, 'echo');
      const call = () => client.callTool({ name: tool, arguments: { message: 'hello' } });
      for (let i = 0; i < (smoke ? 5 : 200); i += 1) await call();
      targets.push({ name, call, pids });
    };
    await addTarget('direct', direct, { 'server-everything': everything.pid });
    for (const variant of variants) {
      const [name, dir] = variant.split('=');
      log(`starting the backend of ${name} (${path.resolve(dir)})`);
      const broker = await startVariant(dir, everything.url);
      const token = await broker.backend.signIn('alice');
      const client = await connectClient({ url: broker.url, token });
      clients.push(client);
      await addTarget(name, client, { 'server-everything': everything.pid, broker: broker.pid });
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
    // One round at a time (order rotated per round), so that each round's CPU per call of every
    // variant can be paired with the first variant's in the same round: the median of those
    // ratios is what drift on a shared machine disturbs least.
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
            cpu: entry.cpuMs.broker / entry.calls,
            rate: entry.calls / entry.wallMs,
          });
        }
      }
      log(`round ${round + 1} done`);
    }
    const median = values => {
      const sorted = [...values].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    };
    /** Median over rounds of `pick(variant) ÷ pick(base)` within each round. */
    const pairedRatio = (mode, name, base, pick) =>
      median(perRound[mode][name].map((r, i) => pick(r) / pick(perRound[mode][base][i])));
    for (const client of clients) await client.close();

    const facts = machineFacts();
    output.push(
      `Machine: ${facts.nproc} cores, ${facts.cpuModel}; Node ${facts.node}. Load average before: ${loadBefore}.`,
      `Command: \`node bench/brokerAB.mjs ${args.join(' ')}\`; backend LOG_LEVEL=warn.`,
      '',
    );
    const rows = [];
    for (const mode of modes) {
      const entryOf = name => results[mode.name][name];
      const rate = name => (entryOf(name).calls / entryOf(name).wallMs) * 1000;
      const cpu = name => entryOf(name).cpuMs.broker / entryOf(name).calls;
      const first = targets[1].name;
      // The variant before this one in --variants (its parent when they are a chain of changes).
      const previous = name => {
        const index = targets.findIndex(target => target.name === name);
        return index > 1 ? targets[index - 1].name : undefined;
      };
      for (const target of targets) {
        const entry = entryOf(target.name);
        const stats = summarize(entry.latencies);
        const isBroker = target.name !== 'direct';
        rows.push([
          mode.name,
          target.name,
          count(entry.calls),
          rate(target.name).toFixed(0),
          ms(stats.p50),
          ms(stats.p99),
          isBroker ? cpu(target.name).toFixed(3) : '',
          (entry.cpuMs['load generator'] / entry.calls).toFixed(3),
          isBroker ? `${(rate(target.name) / rate('direct')).toFixed(3)}×` : '',
          isBroker ? `${(cpu(target.name) / cpu(first)).toFixed(3)}×` : '',
          isBroker ? `${(rate(target.name) / rate(first)).toFixed(3)}×` : '',
          isBroker && target.name !== first
            ? `${pairedRatio(mode.name, target.name, first, r => r.cpu).toFixed(3)}×`
            : '',
          isBroker && previous(target.name) !== undefined
            ? `${pairedRatio(mode.name, target.name, previous(target.name), r => r.cpu).toFixed(3)}×`
            : '',
          isBroker
            ? `${pairedRatio(mode.name, target.name, 'direct', r => r.rate).toFixed(3)}×`
            : '',
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
          'broker CPU ms/call',
          'client CPU ms/call',
          '÷ direct',
          `CPU ÷ ${targets[1].name}`,
          `calls/s ÷ ${targets[1].name}`,
          `CPU ÷ ${targets[1].name}, median of rounds`,
          'CPU ÷ previous variant, median of rounds',
          '÷ direct, median of rounds',
        ],
        rows,
      ),
      '',
      `Load average after: ${loadAverage()}; run took ${((performance.now() - started) / 1000).toFixed(0)} s.`,
      '',
    );
  } finally {
    await stopAll();
  }
  process.stdout.write(`${output.join('\n')}\n`);
}

main().catch(error => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exitCode = 1;
});
