/* A started BackendConnection with short test timings, recording its list updates. */
import { mockServices } from '@backstage/backend-test-utils';
import { BackendConnection, BackendConnectionOptions } from '../BackendConnection';
import type { ListsUpdate } from '../backendConnectionTypes';

/** Starts a connection to `url` as backend `name` (prefix `<name>_`). */
export function startBackendConnection(
  name: string,
  url: string,
  options: {
    updates?: ListsUpdate[];
    headers?: Record<string, string>;
    onStateChanged?: BackendConnectionOptions['onStateChanged'];
    eventStreamOpenMs?: number;
  } = {},
): BackendConnection {
  const connection = new BackendConnection({
    backend: { name, url, toolPrefix: `${name}_`, headers: options.headers ?? {} },
    logger: mockServices.logger.mock(),
    requestTimeoutMs: 5000,
    pollIntervalMs: 60_000,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    onListsUpdated: (_name, update) => options.updates?.push(update),
    onStateChanged: options.onStateChanged,
    eventStreamOpenMs: options.eventStreamOpenMs,
  });
  connection.start();
  return connection;
}
