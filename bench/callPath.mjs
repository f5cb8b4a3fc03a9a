#!/usr/bin/env node
/*
 * The path of one `tools/call` through the broker, for a 2025-11-25 client calling the
 * 2025-11-25 example server (`example_echo`) and a 2026-07-28 client calling the 2026-07-28 one
 * (`example-modern_echo`), both as alice (permissions on), each after a warm-up call:
 *
 * - hops to the backend POST: the broker plugin's functions on the stack (synchronous and
 *   awaiting) when it sends the call's POST to the backend, outermost first, and the files they
 *   are in. Read by bench/lib/callPathProbe.cjs (a preload); V8's async stack traces follow
 *   `await` chains, so a step that already returned, or was reached through a callback or an
 *   event, is not on it.
 * - functions run: every function of the plugin that ran at least once during the call, from
 *   the client's request to its answer (V8 precise coverage with call counts, through the
 *   backend's inspector), and the files they are in; background work in a window (timers)
 *   is kept out by counting what ran in each of three calls. The export getters of the development backend's per-module CommonJS
 *   transpile are left out (a production build has none).
 *
 *   node bench/callPath.mjs            # in this checkout
 *
 * Run it in two checkouts to compare a change with its parent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startBrokerBackend,
  startExampleServer,
  waitForBrokerBackends,
} from './lib/brokerProcesses.mjs';
import { connectClient, connectModernClient } from './lib/mcpClients.mjs';
import { connectInspector, inspectorUrl } from './lib/inspectorGc.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'call-path-')), 'paths.jsonl');
process.env.CALL_PATH_OUT = out;

const started = [];
try {
  const [legacyServer, modernServer] = await Promise.all([
    startExampleServer(),
    startExampleServer('src/modernMain.ts'),
  ]);
  started.push(legacyServer, modernServer);
  const broker = await startBrokerBackend(
    { example: legacyServer.url, 'example-modern': modernServer.url },
    ['--inspect=127.0.0.1:0', '--require', path.join(here, 'lib', 'callPathProbe.cjs')],
  );
  started.push(broker.backend);
  const token = await broker.backend.signIn('alice');
  const adminToken = await broker.backend.signIn('carol');
  await waitForBrokerBackends(broker.backend, adminToken, ['example', 'example-modern']);

  const inspector = await connectInspector(inspectorUrl(broker.backend.output()));
  await inspector.send('Profiler.enable');
  await inspector.send('Debugger.enable');
  await inspector.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const sources = new Map();
  const sourceOf = async scriptId => {
    if (!sources.has(scriptId)) {
      const { scriptSource } = await inspector.send('Debugger.getScriptSource', { scriptId });
      sources.set(scriptId, scriptSource);
    }
    return sources.get(scriptId);
  };
  // The development backend compiles each module to CommonJS with SWC, whose exports are
  // getters (`get name () { return name; }`, or `get: function() { return name; }` for a lone
  // export) run on every use of an import: an artifact of that transpile (a production build
  // has none), left out of the count.
  const EXPORT_GETTER = /^(get (\S+) \(\) |function\(\) )\{\s*return [\w$]+;\s*\}$/;
  /** The plugin's functions that ran since the last call (each take resets the counts). */
  const functionsRun = async () => {
    const { result } = await inspector.send('Profiler.takePreciseCoverage');
    const run = [];
    for (const script of result) {
      const file = script.url.match(/plugins\/mcp-broker-backend\/src\/(.+)$/)?.[1];
      if (file === undefined) continue;
      for (const fn of script.functions) {
        const range = fn.ranges[0];
        // The first entry of a script is its top level (count 1 when loaded).
        if (fn.functionName === '' && range.startOffset === 0) continue;
        if (range.count === 0) continue;
        const text = (await sourceOf(script.scriptId)).slice(range.startOffset, range.endOffset);
        if (EXPORT_GETTER.test(text)) continue;
        run.push({ fn: fn.functionName || '(anonymous)', file });
      }
    }
    return run;
  };

  const paths = {};
  const ran = {};
  const callOnce = async (label, client, name) => {
    // The first call warms caches (token, decisions, sessions); the second is the one shown.
    await client.callTool({ name, arguments: { message: 'warm' } });
    fs.writeFileSync(out, '');
    // Three calls, each measured alone; what ran in all three is the call's (background work,
    // such as a backend's event connection, rarely falls into every window).
    let common;
    for (let i = 0; i < 3; i += 1) {
      await functionsRun();
      await client.callTool({ name, arguments: { message: 'hop' } });
      // What the call does after its answer left (audit, clean-up) belongs to it too.
      await new Promise(resolve => setTimeout(resolve, 200));
      const run = await functionsRun();
      const key = f => `${f.file} ${f.fn}`;
      const seen = new Map();
      for (const f of run) seen.set(key(f), (seen.get(key(f)) ?? 0) + 1);
      if (common === undefined) common = run;
      else {
        // Keep each function as often as it appears in both (a name may be twice in a file).
        const left = new Map(seen);
        common = common.filter(f => {
          const n = left.get(key(f)) ?? 0;
          if (n === 0) return false;
          left.set(key(f), n - 1);
          return true;
        });
      }
    }
    ran[label] = common;
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').filter(Boolean);
    paths[label] = JSON.parse(lines[lines.length - 1]).frames;
    await client.close();
  };
  await callOnce(
    '2025-11-25 client → 2025-11-25 backend (example_echo)',
    await connectClient({ url: broker.url, token }),
    'example_echo',
  );
  await callOnce(
    '2026-07-28 client → 2026-07-28 backend (example-modern_echo)',
    await connectModernClient({ url: broker.url, token }),
    'example-modern_echo',
  );
  inspector.close();
  for (const [label, frames] of Object.entries(paths)) {
    const files = new Set(frames.map(f => f.file));
    const run = ran[label];
    const runFiles = new Set(run.map(f => f.file));
    console.log(`### ${label}`);
    console.log('');
    console.log(`Hops to the backend POST: ${frames.length} across ${files.size} files`);
    for (const { fn, file } of frames) console.log(`  ${fn}  (${file})`);
    console.log('');
    console.log(`Functions run for the call: ${run.length} across ${runFiles.size} files`);
    for (const file of [...runFiles].sort()) {
      const names = run.filter(f => f.file === file).map(f => f.fn);
      console.log(`  ${file}: ${names.join(', ')}`);
    }
    console.log('');
  }
} finally {
  for (const proc of started.reverse()) await proc.stop().catch(() => undefined);
}
