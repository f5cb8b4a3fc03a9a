/*
 * The `-32021` fallback of a 2025-11-25 client's plain `tools/call` to a 2026-07-28 backend
 * (docs/contracts/tasks-and-apps.md §2.12.3): through the whole plugin (startTestBackend) with
 * the real modern tasks fixture, whose `deploy`, `failing_job` and `confirm_delete` answer
 * `-32021` to a call without the tasks extension, and the official SDK 1.x client calling them
 * without `params.task`. The broker declares the extension, sends the call once more, polls the
 * task itself, asks its input on the call's stream and answers the still-open call; no row is
 * kept; `toolCallTimeout` cancels the task at the backend. Two plugin instances on one database
 * (SQLite and PostgreSQL): the input asked by A is answered through B.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  startModernTasksServer,
  TASKS_EXTENSION,
  type ModernTasksServer,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '@backstage/types';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { recordingFetch } from './tasks/__testUtils__/recordingFetch';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

/** The fixture's own ids: task ids `fixture-…`, input keys `<name>-<n>`. */
const BACKEND_IDS = /fixture-|"confirm-\d+"/;

/** Everything every broker answered to a POST, as text (scanned for backend ids). */
const received: Array<Promise<string>> = [];
const clients: Client[] = [];

/** A broker replica with the modern fixture as `jobs`. */
const startReplica = (fixture: ModernTasksServer, knex?: Knex, extra: JsonObject = {}) =>
  startTaskBroker({
    fixtureUrl: fixture.url,
    auditor: recordingAuditor().factory,
    revoked: new Set(),
    knex,
    tasks: { minPollInterval: { milliseconds: 20 } },
    extra,
  });

/**
 * A 2025-11-25 SDK client of `user` on `url`; with `answer` it declares elicitation and answers
 * each elicitation with it (its id given).
 */
async function connect(
  user: string,
  url: URL,
  answer?: (id: string | number) => Promise<ElicitResult> | ElicitResult,
): Promise<Client> {
  const client = new Client(
    { name: 'task-fallback-test', version: '1.0.0' },
    { capabilities: answer === undefined ? {} : { elicitation: {} } },
  );
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (_request, extra) =>
      answer(extra.requestId),
    );
  }
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: {
        headers: { Authorization: mockCredentials.user.header(`user:default/${user}`) },
      },
      fetch: recordingFetch(received),
    }),
  );
  clients.push(client);
  await waitFor(
    async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
    'the modern tasks fixture to be listed',
  );
  return client;
}

/** A plain call of `tool` (no `params.task`). */
const call = (client: Client, tool: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name: `jobs_${tool}`, arguments: args }, CallToolResultSchema, {
    timeout: 30_000,
  });

/** The fixture's `tools/call`s of `tool` (by the `Mcp-Name` header). */
const callsOf = (fixture: ModernTasksServer, tool: string) =>
  fixture.requests.filter(r => r.method === 'tools/call' && r.mcpName === tool);

const declaresTasks = (meta: Record<string, unknown> | undefined) =>
  Object.keys(
    (meta?.['io.modelcontextprotocol/clientCapabilities'] as any)?.extensions ?? {},
  ).includes(TASKS_EXTENSION);

describe('a plain tools/call the 2026-07-28 backend runs only as a task (the -32021 fallback)', () => {
  let fixture: ModernTasksServer;
  let broker: { url: URL; stop(): Promise<void> };

  beforeAll(async () => {
    fixture = await startModernTasksServer();
    broker = await startReplica(fixture);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.splice(0).map(client => client.close()));
    await broker?.stop();
    await fixture?.close();
  }, 30_000);

  it('declares the extension, sends the call once more, polls the task and answers the open call', async () => {
    const client = await connect('dave', broker.url);
    const before = callsOf(fixture, 'deploy').length;
    const answered = call(client, 'deploy', { target: 'plain' });
    await fixture.started('plain');
    const sent = callsOf(fixture, 'deploy').slice(before);
    expect(sent.map(r => declaresTasks(r.meta))).toEqual([false, true]);
    await fixture.finish('plain', 'completed');
    const result = await answered;
    expect(result.content).toEqual([{ type: 'text', text: 'deployed plain' }]);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
    // The broker polled the task itself and kept no row of it.
    expect(fixture.requests.some(r => r.method === 'tasks/get')).toBe(true);
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
  });

  it('answers a task that ends with a tool error with that result', async () => {
    const client = await connect('dave', broker.url);
    const result = await call(client, 'failing_job');
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'the job failed' }],
    });
  });

  it('asks the task’s input on the call’s stream and answers the backend with tasks/update', async () => {
    const ids: Array<string | number> = [];
    const client = await connect('dave', broker.url, id => {
      ids.push(id);
      return { action: 'accept', content: { confirm: true } };
    });
    const updates = fixture.requests.filter(r => r.method === 'tasks/update').length;
    const result = await call(client, 'confirm_delete');
    expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(/^jobs:[A-Za-z0-9_-]{22,}$/);
    expect(fixture.requests.filter(r => r.method === 'tasks/update').length).toBe(updates + 1);
  });

  it('never showed a client the backend’s task ids or input keys (runs last)', async () => {
    const texts = await Promise.all(received);
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) expect(text).not.toMatch(BACKEND_IDS);
  });
});

describe('the -32021 fallback bounded by mcpBroker.toolCallTimeout', () => {
  it('cancels the task at the backend and answers the timeout error, also for input nobody was asked', async () => {
    const fixture = await startModernTasksServer();
    const broker = await startReplica(fixture, undefined, {
      toolCallTimeout: { milliseconds: 1_500 },
    });
    try {
      const client = await connect('erin', broker.url);
      const answered = call(client, 'deploy', { target: 'forever' });
      const job = await fixture.started('forever');
      await expect(answered).rejects.toMatchObject({
        message: expect.stringContaining(
          "exceeded the broker's tool call timeout of 1500 ms (mcpBroker.toolCallTimeout)",
        ),
      });
      await waitFor(
        () => fixture.requests.some(r => r.method === 'tasks/cancel' && r.taskId === job.taskId),
        'the backend to be told to cancel the task',
      );
      // A client without the elicitation capability is not asked: the task waits for the
      // timeout, and is cancelled then.
      const cancels = fixture.requests.filter(r => r.method === 'tasks/cancel').length;
      const answers = received.length;
      await expect(call(client, 'confirm_delete')).rejects.toMatchObject({
        message: expect.stringContaining('exceeded the broker'),
      });
      await waitFor(
        () => fixture.requests.filter(r => r.method === 'tasks/cancel').length === cancels + 1,
        'the waiting task to be cancelled',
      );
      expect(fixture.requests.some(r => r.method === 'tasks/update')).toBe(false);
      for (const text of await Promise.all(received.slice(answers))) {
        expect(text).not.toContain('elicitation/create');
      }
    } finally {
      await Promise.all(clients.splice(0).map(client => client.close()));
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

const { engines } = replicaDatabases('the -32021 fallback across replicas');

describe.each(engines)(
  'the -32021 fallback across replicas (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);

    it('asks the input on A’s call stream; the answer through B reaches the call', async () => {
      const fixture = await startModernTasksServer();
      const a = await startReplica(fixture, knexes[0]);
      const b = await startReplica(fixture, knexes[1]);
      try {
        const outcomes: number[] = [];
        let session = '';
        const client = await connect('alice', a.url, async id => {
          const response = await fetch(b.url, {
            method: 'POST',
            headers: {
              Authorization: mockCredentials.user.header('user:default/alice'),
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
              'Mcp-Session-Id': session,
              'MCP-Protocol-Version': '2025-11-25',
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id,
              result: { action: 'accept', content: { confirm: true } },
            }),
          });
          outcomes.push(response.status);
          return { action: 'decline' }; // the SDK's own answer, on A: the id is used already
        });
        session = (client.transport as StreamableHTTPClientTransport).sessionId!;
        const result = await call(client, 'confirm_delete');
        expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
        expect(outcomes).toEqual([202]);
        expect(fixture.requests.filter(r => r.method === 'tasks/update')).toHaveLength(1);
      } finally {
        await Promise.all(clients.splice(0).map(client => client.close()));
        await a.stop();
        await b.stop();
        await fixture.close();
      }
    }, 60_000);
  },
);
