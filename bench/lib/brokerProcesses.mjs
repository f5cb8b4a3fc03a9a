/*
 * The processes the broker benchmark measures, each started as its own OS process so that
 * its CPU time and RSS can be read from /proc: server-everything (streamable HTTP), the
 * example MCP server (tools/list_changed and elicitation), its 2026-07-28 twin (SDK v2,
 * stateless), mcp-hub (the aggregator we compare
 * against), the pipe relay (bench/pipeRelay.mjs, the floor any relay pays) and the real
 * development backend with the broker pointed at the first two.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const {
  startBackendProcess,
} = require('../../packages/backend/src/testing/startBackendProcess.ts');
const { reservePortForChild } = require('../../packages/test-mcp-backends/src/handedOverPort.ts');

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU time (user + system) of a process so far, in milliseconds, from /proc/<pid>/stat. */
export function cpuMillis(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Resident set size of a process in KiB, from /proc/<pid>/status. */
export function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/^VmRSS:\s+(\d+)/m)[1]);
}

/** Waits until `url` answers an HTTP request (any status) or `timeoutMs` passes. */
async function waitForHttp(url, child, name, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited with code ${child.exitCode} during start`);
    try {
      await fetch(url, { method: 'GET', signal: AbortSignal.timeout(1000) }).then(r =>
        r.body?.cancel(),
      );
      return;
    } catch {
      if (Date.now() > deadline)
        throw new Error(`${name} did not answer at ${url} within ${timeoutMs} ms`);
      await new Promise(resolve => setTimeout(resolve, 200));
    }
  }
}

/**
 * Spawns a Node process whose output is drained (server-everything logs every request). With
 * `reserved` (reservePortForChild), the process listens on that port, held from here on.
 */
async function spawnNode(args, env, cwd = repoRoot, reserved = undefined) {
  const child = spawn(process.execPath, [...(reserved?.nodeArgs ?? []), ...args], {
    cwd,
    env: { ...process.env, ...env, ...reserved?.env },
    stdio: reserved ? reserved.stdio(['ignore', 'pipe', 'pipe']) : ['ignore', 'pipe', 'pipe'],
  });
  await reserved?.handOver(child);
  let tail = '';
  const keepTail = chunk => {
    tail = (tail + chunk).slice(-4000);
  };
  child.stdout.on('data', keepTail);
  child.stderr.on('data', keepTail);
  const exited = new Promise(resolve => child.once('exit', resolve));
  return {
    child,
    pid: child.pid,
    output: () => tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** server-everything over streamable HTTP on a port of its own. */
export async function startServerEverything() {
  const reserved = await reservePortForChild();
  const port = reserved.port;
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const proc = await spawnNode(
    [entry, 'streamableHttp'],
    { PORT: String(port) },
    repoRoot,
    reserved,
  );
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitForHttp(url, proc.child, 'server-everything');
  return { ...proc, url };
}

/**
 * An example MCP server (packages/example-mcp-server) on a port of its own: `src/main.ts`, the
 * 2025-11-25 one (default), or `src/modernMain.ts`, the 2026-07-28 one (SDK v2, stateless).
 */
export async function startExampleServer(entry = 'src/main.ts') {
  const reserved = await reservePortForChild();
  const port = reserved.port;
  const proc = await spawnNode(
    ['--require', require.resolve('@backstage/cli/config/nodeTransform.cjs'), entry],
    { PORT: String(port), HOST: '127.0.0.1' },
    path.join(repoRoot, 'packages', 'example-mcp-server'),
    reserved,
  );
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitForHttp(url, proc.child, `example MCP server (${entry})`);
  return { ...proc, url };
}

/** The byte-pipe relay (bench/pipeRelay.mjs) in front of `targetUrl`, same path. */
export async function startPipeRelay(targetUrl) {
  const reserved = await reservePortForChild();
  const port = reserved.port;
  const target = new URL(targetUrl);
  const proc = await spawnNode(
    [path.join(repoRoot, 'bench', 'pipeRelay.mjs')],
    { PORT: String(port), PIPE_TARGET: target.origin },
    repoRoot,
    reserved,
  );
  const url = `http://127.0.0.1:${port}${target.pathname}`;
  await waitForHttp(url, proc.child, 'pipe relay');
  return { ...proc, url };
}

/** mcp-hub aggregating `servers` ({ name: url }); it serves legacy SSE at /mcp. */
export async function startMcpHub(servers) {
  const reserved = await reservePortForChild();
  const port = reserved.port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mcp-hub-'));
  const configPath = path.join(dir, 'mcp-hub.json');
  const mcpServers = Object.fromEntries(
    Object.entries(servers).map(([name, url]) => [name, { url }]),
  );
  fs.writeFileSync(configPath, JSON.stringify({ mcpServers }));
  // XDG_STATE_HOME keeps mcp-hub's log and workspace cache out of the user's home.
  const proc = await spawnNode(
    [require.resolve('mcp-hub/dist/cli.js'), '--port', String(port), '--config', configPath],
    { XDG_STATE_HOME: dir },
    repoRoot,
    reserved,
  );
  const url = `http://127.0.0.1:${port}/mcp`;
  const health = `http://127.0.0.1:${port}/api/health`;
  const deadline = Date.now() + 30_000;
  // Ready when every configured server is connected (mcp-hub connects in the background).
  for (;;) {
    await waitForHttp(health, proc.child, 'mcp-hub');
    const body = await fetch(health)
      .then(r => r.json())
      .catch(() => ({}));
    const states = (body.servers ?? []).map(server => server.status);
    if (
      states.length === Object.keys(servers).length &&
      states.every(state => state === 'connected')
    )
      break;
    if (Date.now() > deadline)
      throw new Error(`mcp-hub servers not connected: ${JSON.stringify(states)}\n${proc.output()}`);
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  return {
    ...proc,
    url,
    async stop() {
      await proc.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The real development backend with the broker pointed at `servers` ({ name: url }), at log
 * level `logLevel` (default warn: request logging would be measured otherwise). `nodeArgs` may
 * add Node flags such as `--cpu-prof`. `options.instrumentation` loads the development
 * backend's OpenTelemetry set-up (as `yarn start` does); `options.mcpBroker` adds broker config
 * (e.g. `rateLimits`). Returns the backend (with `pid`) and the broker's MCP URL.
 */
export async function startBrokerBackend(servers, nodeArgs = [], logLevel = 'warn', options = {}) {
  const backend = await startBackendProcess({
    config: {
      mcpBroker: {
        // A server is its URL, or its entry without the name (headers, auth).
        servers: Object.entries(servers).map(([name, entry]) =>
          typeof entry === 'string' ? { name, url: entry } : { name, ...entry },
        ),
        // The fan-out and memory sections open up to 10,000 sessions as one user; the defaults
        // (32 per principal, 5,000 per replica) would evict them (404) or refuse them (429).
        sessionLimits: { perPrincipal: 20_000, perReplica: 20_000 },
        ...options.mcpBroker,
      },
    },
    env: { LOG_LEVEL: logLevel },
    nodeArgs,
    startTimeoutMs: 120_000,
    instrumentation: options.instrumentation === true,
  });
  return { backend, pid: backend.pid, url: `${backend.baseUrl}/api/mcp-broker/mcp` };
}

/**
 * The identity section's servers (spec §11), in this process: the RFC 8693 token exchange server
 * of our test packages and a whoami MCP server that accepts the broker's own token and the
 * exchanged tokens (verifying each JWT, as a real resource server does).
 */
export async function startIdentityServers() {
  const {
    startTokenExchangeServer,
    startWhoamiServer,
  } = require('../../packages/test-mcp-backends/src/index.ts');
  const sts = await startTokenExchangeServer({
    clients: { 'mcp-broker': 'bench-exchange-secret' },
    trustedIssuers: [],
    allowedTargets: ['whoami'],
    // Longer than any run: after the first call every exchanged call is a cache hit.
    tokenLifetimeS: 3600,
  });
  const whoami = await startWhoamiServer({
    era: 'legacy',
    brokerToken: 'bench-broker-token',
    jwt: { jwksUrl: sts.jwksUrl, issuer: sts.issuer, audience: 'whoami' },
  });
  const headers = { Authorization: 'Bearer bench-broker-token' };
  return {
    sts,
    whoami,
    servers: {
      whoami: { url: whoami.url, headers },
      'whoami-exchange': {
        url: whoami.url,
        headers,
        auth: {
          mode: 'tokenExchange',
          tokenEndpoint: sts.tokenEndpoint,
          clientId: 'mcp-broker',
          clientSecret: 'bench-exchange-secret',
          audience: 'whoami',
        },
      },
    },
    /** Lets the token exchange server trust the broker's subject tokens. */
    trustBroker(baseUrl) {
      sts.trust({
        issuer: `${baseUrl}/api/mcp-broker`,
        jwksUrl: `${baseUrl}/api/mcp-broker/.well-known/jwks.json`,
      });
    },
    async stop() {
      await whoami.close();
      await sts.close();
    },
  };
}

/** Polls the broker's status until every backend is connected. */
export async function waitForBrokerBackends(backend, token, names, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
      headers: { Authorization: `Bearer ${token}` },
    }).then(r => r.json());
    const connected = status.backends.filter(
      b => b.state === 'connected' && (b.eventStream === 'open' || b.eventStream === 'none'),
    );
    if (names.every(name => connected.some(b => b.name === name))) return status;
    if (Date.now() > deadline)
      throw new Error(`broker backends not connected: ${JSON.stringify(status.backends)}`);
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}
