/*
 * The configuration of the benchmarks' replicas of the development backend (bench/soak.mjs,
 * bench/rollingRestart.mjs): one PostgreSQL with the production pools, the broker's session store
 * in it with the key every replica shares, one example MCP server behind the broker, and no
 * per-person limit (the development config's demonstration limit on `count` would refuse a
 * steady load after its 20th call a day).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const {
  productionKnexConfig,
} = require('../../packages/backend/src/testing/productionKnexConfig.ts');
const { connectionObject } = require('../../packages/backend/src/testing/backendDatabases.ts');

/** The config of every replica: `postgres` is the benchmark's server, `exampleUrl` the MCP server. */
export function replicaConfig(postgres, exampleUrl) {
  return {
    backend: {
      database: {
        client: 'pg',
        connection: connectionObject(postgres.connectionString),
        knexConfig: productionKnexConfig(),
      },
    },
    mcpBroker: {
      sessionStore: 'database',
      // Required with the database session store: the replicas seal their shared signing and
      // requestState keys with it, so they all get the same one.
      credentialEncryptionKey: randomBytes(32).toString('base64'),
      servers: [{ name: 'example', url: exampleUrl }],
      rateLimits: { overrides: [] },
    },
  };
}
