/*
 * The matrix and helpers of the whole MCP access flow (contract mcp-access §10.2,
 * mcpAccessFlow.test.ts): the rows (SQLite with one replica; PostgreSQL with one and with two,
 * the latter only when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set), the
 * backends of a row with the flow's config, the people's MCP clients with the arrival times of
 * their `tools/list_changed`, and the portal's expiry task as the scheduler reports it.
 *
 * The grant feed is push-only in this flow (`accessGrants.pollInterval` one hour): whatever a
 * client sees arrived in process or through `NOTIFY`, which is what proves "at once".
 */
import { randomBytes } from 'node:crypto';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { BackendDatabase, backendDatabases } from '../../testing/backendDatabases';
import { BackendProcess, startBackendProcess } from '../../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, waitFor } from '../brokerTestKit';

/** One row of the §10.2 matrix. */
export interface FlowRow {
  name: string;
  database: BackendDatabase;
  replicas: 1 | 2;
}

/** The rows this run can hold: SQLite 1; PostgreSQL 1 and 2 when a server is configured. */
export function flowRows(): FlowRow[] {
  return backendDatabases('mcpAccessFlow').flatMap((database): FlowRow[] =>
    database.name === 'SQLite'
      ? [{ name: 'SQLite, 1 replica', database, replicas: 1 }]
      : [
          { name: 'PostgreSQL, 1 replica', database, replicas: 1 },
          { name: 'PostgreSQL, 2 replicas', database, replicas: 2 },
        ],
  );
}

/** How often the portal's expiry task runs here (the default is every minute). */
const KEY_EXPIRY_EVERY_SECONDS = 2;

/** The running backends of a row: `portal` takes the people's portal calls, `mcp` their MCP sessions. */
export interface FlowBackends {
  /** Replica A (the only one on a one-replica row). */
  readonly portal: BackendProcess;
  /** Replica B (on a one-replica row, the same process as `portal`). */
  readonly mcp: BackendProcess;
  /** Stops `mcp` and starts it again on the same database (a new process, a new port). */
  restartMcp(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the row's backends one after the other (the first runs the migrations), with the broker
 * serving `servers` and the flow's short intervals.
 */
export async function startFlowBackends(
  row: FlowRow,
  servers: ReadonlyArray<Record<string, unknown>>,
): Promise<FlowBackends> {
  const postgres = row.database.name === 'PostgreSQL';
  const config = {
    backend: { database: row.database.config },
    mcpBroker: {
      servers,
      // Usage reaches the table within a second (default 30 s).
      usage: { flushInterval: { seconds: 1 } },
      // Push only (see the top of this file).
      accessGrants: { pollInterval: { hours: 1 } },
      // Replicas share sessions and the broker's keys (sealed with this key) in the database.
      ...(postgres && {
        sessionStore: 'database',
        credentialEncryptionKey: randomBytes(32).toString('base64'),
      }),
    },
    portal: {
      keyExpiry: {
        schedule: { frequency: { seconds: KEY_EXPIRY_EVERY_SECONDS }, timeout: { seconds: 30 } },
      },
    },
  };
  const start = () => startBackendProcess({ config, startTimeoutMs: 120_000 });
  const replicas: BackendProcess[] = [];
  try {
    while (replicas.length < row.replicas) replicas.push(await start());
  } catch (error) {
    await Promise.all(replicas.map(replica => replica.stop()));
    throw error;
  }
  const mcpIndex = replicas.length - 1;
  return {
    get portal() {
      return replicas[0];
    },
    get mcp() {
      return replicas[mcpIndex];
    },
    async restartMcp() {
      await replicas[mcpIndex].stop();
      replicas[mcpIndex] = await start();
    },
    async stop() {
      await Promise.all(replicas.map(replica => replica.stop()));
      await row.database.cleanup();
    },
  };
}

/** A person's MCP client with the times (`Date.now()`) its `tools/list_changed` arrived. */
export interface FlowClient extends BrokerClient {
  readonly listChangedAt: number[];
  /** The names of the person's tools of broker server `server` (`<server>_…`), sorted. */
  toolsOf(server: string): Promise<string[]>;
}

/**
 * Connects an SDK client (with elicitation) to `backend`'s broker as `token`'s user; resolves
 * once its GET event stream is open, so every later `list_changed` reaches it.
 */
export async function connectFlowClient(
  backend: BackendProcess,
  token: string,
): Promise<FlowClient> {
  const connected = await connectBrokerClient(backend.baseUrl, token, undefined, {
    elicitation: {},
  });
  const listChangedAt: number[] = [];
  connected.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    listChangedAt.push(Date.now());
  });
  await connected.eventStreamOpen;
  return {
    ...connected,
    listChangedAt,
    async toolsOf(server: string) {
      return (await connected.client.listTools()).tools
        .map(tool => tool.name)
        .filter(name => name.startsWith(`${server}_`))
        .sort();
    },
  };
}

/** The scheduler's state of the portal's `portal-key-expiry` task (its last run's end). */
async function keyExpiryLastRunEndedAt(backend: BackendProcess, token: string): Promise<number> {
  const response = await fetch(`${backend.baseUrl}/api/portal/.backstage/scheduler/v1/tasks`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) {
    throw new Error(`the portal's scheduler answered ${response.status}: ${await response.text()}`);
  }
  const { tasks } = (await response.json()) as {
    tasks: Array<{ taskId: string; taskState: { lastRunEndedAt?: string } | null }>;
  };
  const task = tasks.find(t => t.taskId === 'portal-key-expiry');
  if (task === undefined) throw new Error('the portal has no portal-key-expiry task');
  const ended = task.taskState?.lastRunEndedAt;
  return ended === undefined ? 0 : Date.parse(ended);
}

/**
 * Resolves once a run of the portal's expiry task that started after this call has ended: from
 * then on, whatever that run would announce has been announced. (Two runs: the one under way
 * when this is called may have read the keys before.)
 */
export async function keyExpiryRunsAfterNow(backend: BackendProcess, token: string): Promise<void> {
  for (let run = 0; run < 2; run += 1) {
    const since = await keyExpiryLastRunEndedAt(backend, token);
    await waitFor(
      async () => (await keyExpiryLastRunEndedAt(backend, token)) > since,
      30_000,
      'a run of portal-key-expiry to end',
    );
  }
}
