/*
 * Helpers for the broker's end-to-end tests: waiting (for a condition, or for a marker
 * notification that shows nothing more is on its way), and official SDK clients connected to the
 * broker in the real backend process (the MCP servers come from @internal/example-mcp-server and
 * @internal/test-mcp-backends; both example servers as one mixed-era fleet:
 * `__testUtils__/exampleFleet.ts`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

/** Waits until `check` returns a truthy value (and resolves with it), polling every 50 ms. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}

/** Waits until a client has received `notifications/elicitation/complete` for `elicitationId`. */
export async function waitForElicitationComplete(
  notifications: ReadonlyArray<{ method: string; params?: any }>,
  elicitationId: string,
  timeoutMs = 10_000,
): Promise<void> {
  await waitFor(
    () =>
      notifications.some(
        n =>
          n.method === 'notifications/elicitation/complete' &&
          n.params?.elicitationId === elicitationId,
      ),
    timeoutMs,
    'notifications/elicitation/complete',
  );
}

/**
 * Shows that nothing more is on its way to some clients, without waiting for a number of
 * milliseconds: `announce` makes a backend send a list_changed of a kind the test does not
 * count (`markerMethod`), which the broker forwards on each client's GET stream behind
 * everything it sent there before. Resolves once every client has the marker; from then on a
 * test can count what arrived. The marker must be announced after whatever could cause the
 * unwanted notification (the test waits for that first); a notification held back by the
 * coalescing window may still follow it, which tests account for (or set the window to 0).
 */
export async function passMarker(
  clients: ReadonlyArray<{ notifications: string[] }>,
  announce: () => void | Promise<void>,
  markerMethod = 'notifications/prompts/list_changed',
): Promise<void> {
  const markers = (client: { notifications: string[] }) =>
    client.notifications.filter(m => m === markerMethod).length;
  const before = clients.map(markers);
  await announce();
  await waitFor(
    () => clients.every((client, i) => markers(client) > before[i]),
    10_000,
    `the marker ${markerMethod}`,
  );
}

/**
 * A `fetch` for the SDK's transport that tells when the client's GET event stream is open. The
 * SDK opens it after connect() resolves and says nothing once it is up; the broker registers a
 * stream before its headers go out, so from `eventStreamOpen` on, notifications reach the client.
 * `base` sends the requests (e.g. one that routes them to replicas).
 */
export function eventStreamWatchingFetch(base: FetchLike = fetch): {
  fetch: FetchLike;
  eventStreamOpen: Promise<void>;
} {
  let opened!: () => void;
  const eventStreamOpen = new Promise<void>(resolve => (opened = resolve));
  return {
    eventStreamOpen,
    fetch: async (url, init) => {
      const response = await base(url, init);
      if ((init?.method ?? 'GET') === 'GET' && response.status === 200) opened();
      return response;
    },
  };
}

/** An SDK client connected to the broker, recording the notifications it receives. */
export interface BrokerClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  notifications: string[];
  /** Resolves once the client's GET event stream is open at the broker. */
  eventStreamOpen: Promise<void>;
  close(): Promise<void>;
}

/** The broker's main MCP endpoint, relative to the backend's base URL. */
export const BROKER_MCP_PATH = '/api/mcp-broker/mcp';

/**
 * Connects the official SDK client (streamable HTTP) to the broker with a Backstage token, at
 * `path` (default the main endpoint; a curated one is `/api/mcp-broker/endpoints/<name>/mcp`),
 * declaring `capabilities` (e.g. `{ elicitation: {} }` to answer a tool's questions).
 */
export async function connectBrokerClient(
  baseUrl: string,
  token: string,
  path = BROKER_MCP_PATH,
  capabilities: ClientCapabilities = {},
): Promise<BrokerClient> {
  const { fetch: watchingFetch, eventStreamOpen } = eventStreamWatchingFetch();
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: watchingFetch,
  });
  const client = new Client({ name: 'broker-e2e', version: '1.0.0' }, { capabilities });
  const notifications: string[] = [];
  client.fallbackNotificationHandler = async notification => {
    notifications.push(notification.method);
  };
  await client.connect(transport);
  return {
    client,
    transport,
    notifications,
    eventStreamOpen,
    async close() {
      await client.close().catch(() => {});
    },
  };
}

// eslint-disable-next-line no-control-regex -- ESC starts the log's colour codes
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * The tool-call audit events of the backend's output (development log format:
 * `... mcp-broker.tool-call ... meta={json} status="..."`), as their meta plus status.
 */
export function toolCallAuditLines(output: string): Array<Record<string, any>> {
  return auditLines(output, 'mcp-broker.tool-call');
}

/** The audit events `eventId` (e.g. `mcp-broker.request`) of the backend's output; see above. */
export function auditLines(output: string, eventId: string): Array<Record<string, any>> {
  return output
    .replace(ANSI, '')
    .split('\n')
    .filter(line => line.includes(` ${eventId} `))
    .map(line => ({
      ...JSON.parse(/ meta=(\{.*?\}) status=/.exec(line)![1]),
      status: JSON.parse(/ status=("[a-z]+")/.exec(line)![1]),
    }));
}

/** One backend's row on the broker's `/status` (the fields the e2e tests read). */
export interface BrokerBackendStatus {
  name: string;
  state: string;
  eventStream: string;
  era?: string;
  eraDetectedAt?: string;
  protocolVersion?: string;
  nextRetryAt?: string;
  lastConnectedAt?: string;
  lastEventAt?: string;
  lastError?: string;
  consecutiveFailures: number;
  droppedEvents: number;
  counts: { tools: number; resources: number; prompts: number };
  /** Lists cut at the last listing, by bound (`items` or `pages`). */
  truncatedLists: Record<string, string>;
  /** Counts of each misbehaviour class the broker noticed, with the time of the last one. */
  misbehaviours: Record<string, { count: number; lastAt?: string }>;
}

/** The broker's `/status` (the fields the e2e tests read). */
export interface BrokerStatus {
  backends: BrokerBackendStatus[];
  clashes: Array<{ kind: string; name: string; owner: string; hidden: string }>;
  clients: { sessions: number; eventStreams: number };
}

/** One backend's row on `/status` (fails the test when there is none by that name). */
export async function brokerBackendStatus(
  baseUrl: string,
  token: string,
  name: string,
): Promise<BrokerBackendStatus> {
  const backend = (await brokerStatus(baseUrl, token)).backends.find(b => b.name === name);
  if (backend === undefined) throw new Error(`no backend ${name} on /status`);
  return backend;
}

/** Reads the broker's `/status` as `token`'s user; fails the test unless it answers 200. */
export async function brokerStatus(baseUrl: string, token: string): Promise<BrokerStatus> {
  const response = await fetch(`${baseUrl}/api/mcp-broker/status`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (response.status !== 200) {
    throw new Error(`GET /api/mcp-broker/status answered ${response.status}`);
  }
  return (await response.json()) as BrokerStatus;
}

/** Waits until every backend on the broker's `/status` is `ready` (as `token`'s user). */
export async function waitForBrokerBackends(
  baseUrl: string,
  token: string,
  ready: (backend: BrokerBackendStatus) => boolean,
  what: string,
): Promise<void> {
  await waitFor(
    async () => (await brokerStatus(baseUrl, token)).backends.every(ready),
    60_000,
    what,
  );
}
