#!/usr/bin/env node
/*
 * Where the time of one portal request goes: the development backend on a seeded SQLite
 * database serves one route, sequentially, to one signed-in user, and this script prints
 *   1. the wall time of each piece of a request (token verification, on-behalf-of token
 *      minting, the authorize round trip, the RBAC policy, the store, the response, GC),
 *      recorded inside the backend by lib/requestPieces.cjs;
 *   2. with --cpu-prof: a CPU profile of the backend over the same number of requests
 *      (taken through its inspector, start-up and warm-up excluded), summed by package;
 *   3. with --heap-prof: a sampling heap profile, allocations per request by package.
 *
 *   node bench/portal-profile.mjs                                   # GET /api/portal/requests/my as alice
 *   node bench/portal-profile.mjs --route authorize                 # the RBAC round trip alone (the floor)
 *   node bench/portal-profile.mjs --route '/api/portal/requests/my?namespace=empty' --cpu-prof /tmp/p.cpuprofile
 *   node bench/portal-profile.mjs --smoke       # 200 records, 20 requests, both profiles into a temporary directory
 *
 * Options: --route <path|authorize>  --user alice  --records 1000  --requests 1000
 *          --warmup 300  --node-env development  --cpu-prof <file>  --heap-prof <file>
 * Tables (Markdown) go to stdout, progress to stderr.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startPortalBackend } from './lib/backend.mjs';
import { connectInspector, inspectorUrl } from './lib/inspectorGc.mjs';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { createBenchDatabase, seedPortal } from './lib/portalDatabases.mjs';
import { schedStat } from './lib/procStat.mjs';
import { allocationByPackage, cpuByPackage } from './lib/profileTables.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

const { values: options } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    route: { type: 'string', default: '/api/portal/requests/my' },
    user: { type: 'string', default: 'alice' },
    records: { type: 'string' },
    requests: { type: 'string' },
    warmup: { type: 'string' },
    'node-env': { type: 'string', default: 'development' },
    'cpu-prof': { type: 'string' },
    'heap-prof': { type: 'string' },
  },
});
const smoke = options.smoke;
const records = Number(options.records ?? (smoke ? 200 : 1000));
const requests = Number(options.requests ?? (smoke ? 20 : 1000));
const warmup = Number(options.warmup ?? (smoke ? 5 : 300));
const { route, user } = options;

function log(message) {
  process.stderr.write(`[profile ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** The two permissions a key list asks for, as the portal sends them (the floor's body). */
const AUTHORIZE_BODY = {
  items: ['portal.apikey.read.all', 'portal.apikey.read.own'].map((name, index) => ({
    id: String(index),
    permission: { type: 'basic', name, attributes: { action: 'read' } },
  })),
};

function requestFor(backend, token) {
  const url = route === 'authorize' ? '/api/permission/authorize' : route;
  const init =
    route === 'authorize'
      ? {
          method: 'POST',
          body: JSON.stringify(AUTHORIZE_BODY),
          headers: { 'Content-Type': 'application/json' },
        }
      : { method: 'GET', headers: {} };
  init.headers.Authorization = `Bearer ${token}`;
  return async () => {
    const response = await fetch(`${backend.baseUrl}${url}`, init);
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`${init.method} ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  };
}

/** Sends `count` requests one after the other; returns client wall times and backend CPU. */
async function run(call, count, pid) {
  const before = schedStat(pid);
  const times = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  const after = schedStat(pid);
  times.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(count / 2)],
    mean: times.reduce((sum, ms) => sum + ms, 0) / count,
    cpuPerRequest: before && after ? (after.cpuNs - before.cpuNs) / 1e6 / count : undefined,
  };
}

const fixed = value => (value === undefined ? '–' : value.toFixed(value < 10 ? 3 : 1));

const loadAtStart = loadAverage();
const machine = machineFacts();
const database = createBenchDatabase('sqlite', 'profile');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-profile-'));
const piecesFile = path.join(scratch, 'pieces.json');
// The smoke run exercises every table (profiles into the scratch directory unless asked).
const cpuProfFile =
  options['cpu-prof'] ?? (smoke ? path.join(scratch, 'smoke.cpuprofile') : undefined);
const heapProfFile =
  options['heap-prof'] ?? (smoke ? path.join(scratch, 'smoke.heapprofile') : undefined);
let started;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    log(`${signal}: stopping the backend`);
    if (started) await started.backend.stop();
    await database.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  });
}
try {
  log(`seeding ${records} key requests on SQLite`);
  const knex = database.openPortal();
  await seedPortal(knex, records);
  await knex.destroy();
  log('starting the backend');
  started = await startPortalBackend({
    database: database.backendConfig,
    logLevel: 'warn',
    users: [user],
    nodeArgs: ['--inspect=127.0.0.1:0', '--require', path.join(here, 'lib', 'requestPieces.cjs')],
    env: { NODE_ENV: options['node-env'], REQUEST_PIECES_OUT: piecesFile },
  });
  const { backend, pid } = started;
  const call = requestFor(backend, started.tokens[user]);
  log(`${warmup} warm-up requests`);
  await run(call, warmup, pid);

  log(`${requests} requests, timing the pieces`);
  process.kill(pid, 'SIGUSR1');
  for (let waited = 0; !fs.existsSync(`${piecesFile}.reset`); waited += 20) {
    if (waited > 10_000)
      throw new Error('the backend did not acknowledge SIGUSR1 (bench/lib/requestPieces.cjs)');
    await new Promise(resolve => setTimeout(resolve, 20));
  }
  const timed = await run(call, requests, pid);
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; !fs.existsSync(piecesFile) && waited < 5000; waited += 50) {
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  // The file may exist before it is complete; read it once it parses.
  let pieces;
  for (let attempt = 0; pieces === undefined; attempt += 1) {
    try {
      pieces = JSON.parse(fs.readFileSync(piecesFile, 'utf8'));
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise(resolve => setTimeout(resolve, 50));
    }
  }

  let cpu;
  let heap;
  if (cpuProfFile || heapProfFile) {
    const inspector = await connectInspector(inspectorUrl(backend.output()));
    try {
      if (cpuProfFile) {
        log(`${requests} requests under the CPU profiler`);
        await inspector.send('Profiler.enable');
        await inspector.send('Profiler.setSamplingInterval', { interval: 200 });
        await inspector.send('Profiler.start');
        const profiled = await run(call, requests, pid);
        const { profile } = await inspector.send('Profiler.stop');
        fs.writeFileSync(cpuProfFile, JSON.stringify(profile));
        cpu = { ...cpuByPackage(profile), profiled };
      }
      if (heapProfFile) {
        log(`${requests} requests under the sampling heap profiler`);
        await inspector.send('HeapProfiler.enable');
        await inspector.send('HeapProfiler.startSampling', {
          samplingInterval: 8192,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
        await run(call, requests, pid);
        const { profile } = await inspector.send('HeapProfiler.stopSampling');
        fs.writeFileSync(heapProfFile, JSON.stringify(profile));
        heap = allocationByPackage(profile);
      }
    } finally {
      inspector.close();
    }
  }

  const lines = [];
  const print = line => lines.push(line);
  print(`## Portal request profile ${new Date().toISOString()}`);
  print('');
  print(
    `Machine: ${machine.nproc} cores, ${machine.memoryGiB} GiB, ${machine.cpuModel}; ${machine.platform}; Node ${machine.node}. ` +
      `Load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadAverage()} at the end.`,
  );
  print(
    `Route: ${route === 'authorize' ? 'POST /api/permission/authorize (read.all + read.own)' : `GET ${route}`} as ${user}; ` +
      `${records} key requests on SQLite; NODE_ENV=${options['node-env']}; ${warmup} warm-up requests, then ${requests} sequential requests per table.`,
  );
  print(`Command: node bench/portal-profile.mjs ${process.argv.slice(2).join(' ')}`.trim());
  print('');
  print('### Per request');
  print('');
  print('| measured | client p50 ms | client mean ms | backend CPU ms / request (all threads) |');
  print('| --- | --- | --- | --- |');
  print(
    `| pieces timed | ${fixed(timed.p50)} | ${fixed(timed.mean)} | ${fixed(timed.cpuPerRequest)} |`,
  );
  if (cpu) {
    print(
      `| under the CPU profiler | ${fixed(cpu.profiled.p50)} | ${fixed(cpu.profiled.mean)} | ${fixed(cpu.profiled.cpuPerRequest)} |`,
    );
  }
  print('');
  print('### Pieces (wall time inside the backend, nested: a piece includes the pieces it calls)');
  print('');
  print('| piece | calls / request | mean ms | p50 ms |');
  print('| --- | --- | --- | --- |');
  for (const [piece, { n, meanMs, p50Ms }] of Object.entries(pieces).sort(
    (a, b) => b[1].meanMs * b[1].n - a[1].meanMs * a[1].n,
  )) {
    if (piece.startsWith('new TCP')) continue;
    print(`| ${piece} | ${(n / requests).toFixed(2)} | ${fixed(meanMs)} | ${fixed(p50Ms)} |`);
  }
  print(
    `| new TCP connections accepted | ${((pieces['new TCP connections accepted']?.n ?? 0) / requests).toFixed(2)} | | |`,
  );
  if (cpu) {
    print('');
    print(
      `### CPU profile by package (main thread, ${fixed(cpu.busyMs / requests)} ms busy per request)`,
    );
    print('');
    print('| package | self ms / request | self share | inclusive ms / request |');
    print('| --- | --- | --- | --- |');
    for (const row of cpu.packages.filter(row => row.selfMs / cpu.busyMs >= 0.005)) {
      print(
        `| ${row.name} | ${fixed(row.selfMs / requests)} | ${((100 * row.selfMs) / cpu.busyMs).toFixed(1)} % | ${fixed(row.inclusiveMs / requests)} |`,
      );
    }
    print('');
    print('Top functions by self time:');
    print('');
    print('| function | self ms / request |');
    print('| --- | --- |');
    for (const row of cpu.functions.slice(0, 15))
      print(`| ${row.name} | ${fixed(row.selfMs / requests)} |`);
  }
  if (heap) {
    print('');
    print(
      `### Allocations by package (sampled, ${(heap.totalBytes / requests / 1024).toFixed(0)} KiB per request)`,
    );
    print('');
    print('| package | self KiB / request | share | inclusive KiB / request |');
    print('| --- | --- | --- | --- |');
    for (const row of heap.packages.filter(row => row.selfBytes / heap.totalBytes >= 0.005)) {
      print(
        `| ${row.name} | ${(row.selfBytes / requests / 1024).toFixed(1)} | ${((100 * row.selfBytes) / heap.totalBytes).toFixed(1)} % | ${(row.inclusiveBytes / requests / 1024).toFixed(1)} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  if (started) await started.backend.stop();
  await database.cleanup();
  fs.rmSync(scratch, { recursive: true, force: true });
}
