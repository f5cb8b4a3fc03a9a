/*
 * The real development backend (packages/backend: auth with oauth2-proxy sign-in, the
 * catalog with the fixture users, the RBAC plugin with the example policies, the portal)
 * started as a child process on a free port, through the same helper the end-to-end
 * tests use. The broker gets no MCP servers, so nothing but the portal is measured.
 */
import { createRequire } from 'node:module';
import { childPids } from './procStat.mjs';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const {
  startBackendProcess,
} = require('../../packages/backend/src/testing/startBackendProcess.ts');

/**
 * Starts the backend on `database` (a `backend.database` config) at `logLevel` and
 * signs `users` in; `nodeArgs` and `env` go to the process as they are (e.g. an
 * `--inspect` flag, `NODE_ENV`). Returns `{ backend, tokens, startSeconds, pid }` (`pid`: the backend
 * process, for its CPU counters; undefined when it cannot be told apart). Start backends
 * one after the other, or the pids cannot be told apart.
 */
export async function startPortalBackend({ database, logLevel, users, nodeArgs = [], env = {} }) {
  const started = performance.now();
  const earlier = new Set(childPids('src/index.ts'));
  const backend = await startBackendProcess({
    config: {
      mcpBroker: { servers: [] },
      backend: { database },
      // The catalog module's full sync reads the portal with a service token: its calls would
      // land in the measured access log. Nothing here needs the API entities.
      catalog: {
        providers: {
          portal: {
            schedule: {
              frequency: { hours: 24 },
              timeout: { minutes: 3 },
              initialDelay: { hours: 24 },
            },
          },
        },
      },
    },
    env: { LOG_LEVEL: logLevel, ...env },
    nodeArgs,
    startTimeoutMs: 120_000,
  });
  const tokens = {};
  try {
    for (const user of users) tokens[user] = await signInWhenIngested(backend, user);
  } catch (error) {
    await backend.stop();
    throw error;
  }
  const fresh = childPids('src/index.ts').filter(pid => !earlier.has(pid));
  return {
    backend,
    tokens,
    startSeconds: (performance.now() - started) / 1000,
    pid: backend.pid ?? (fresh.length === 1 ? fresh[0] : undefined),
  };
}

/** Signs a fixture user in, retrying while the catalog is still ingesting the users. */
async function signInWhenIngested(backend, user) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await backend.signIn(user);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise(resolve => setTimeout(resolve, 250));
    }
  }
}
