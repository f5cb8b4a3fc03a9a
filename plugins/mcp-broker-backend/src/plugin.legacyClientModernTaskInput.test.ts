/*
 * Input during the emulated `tasks/result` of a 2025-11-25 client whose task runs on a
 * 2026-07-28 backend (docs/contracts/tasks-and-apps.md §2.12.3): through the whole plugin
 * (startTestBackend) with the real modern tasks fixture (`confirm_delete`, `multi_input`: tasks
 * that go `input_required`) and the official SDK 1.x client with an elicitation handler (and one
 * without the capability). Each input is asked on the `tasks/result` stream under a gateway id
 * with the broker task id as `related-task`; the answer becomes the fixture's `tasks/update`
 * under its own key; an answer counts once and only from the session that was asked; each poll
 * is one audited `get`. Two plugin instances on one database (SQLite and PostgreSQL): asked on
 * A, answered through B. No client ever sees the backend's task ids or input keys.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import { startModernTasksServer, type ModernTasksServer } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { taskRefOf } from './tasks/TaskAuditor';
import { recordingFetch } from './tasks/__testUtils__/recordingFetch';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/** The fixture's own ids: task ids `fixture-…`, input keys `<name>-<n>`. */
const BACKEND_IDS = /fixture-|"(confirm|first|second)-\d+"/;

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** Everything every broker answered to a POST, as text (scanned for backend ids). */
const received: Array<Promise<string>> = [];
const clients: Client[] = [];

/** An elicitation the client was asked, with the id it came under. */
interface Asked {
  id: string | number;
  request: ElicitRequest;
}

/**
 * A 2025-11-25 SDK client of `user` on `url`; with `answer` it declares elicitation and answers
 * each elicitation with it (after recording it in `asked`).
 */
async function connect(
  user: string,
  url: URL,
  answer?: (asked: Asked) => Promise<ElicitResult> | ElicitResult,
  asked: Asked[] = [],
): Promise<Client> {
  const client = new Client(
    { name: 'task-input-test', version: '1.0.0' },
    { capabilities: answer === undefined ? {} : { elicitation: {} } },
  );
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const one = { id: extra.requestId, request };
      asked.push(one);
      return answer(one);
    });
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
    async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_confirm_delete'),
    'the modern tasks fixture to be listed',
  );
  return client;
}

/** A task-augmented call of `tool`. */
const startTask = (client: Client, tool: string) =>
  client.request(
    { method: 'tools/call', params: { name: `jobs_${tool}`, arguments: {}, task: {} } },
    CreateTaskResultSchema,
  );

/** The session id of an SDK client. */
const sessionOf = (client: Client) =>
  (client.transport as StreamableHTTPClientTransport).sessionId!;

/** POSTs `answer` (a JSON-RPC response) as `user` in session `session` to `url`. */
const postAnswer = (url: URL, user: string, session: string, answer: Record<string, unknown>) =>
  fetch(url, {
    method: 'POST',
    headers: {
      Authorization: mockCredentials.user.header(`user:default/${user}`),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': session,
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...answer }),
  });

/** The `inputResponses` of every `tasks/update` the fixture received. */
const updatesOf = (fixture: ModernTasksServer) =>
  fixture.taskMessages
    .filter(m => m.schema === 'UpdateTaskRequestV2Schema')
    .map(m => (m.message as any).params.inputResponses as Record<string, unknown>);

const accept = (content: Record<string, unknown>): ElicitResult => ({
  action: 'accept',
  content: content as ElicitResult['content'],
});

describe('input during the emulated tasks/result (2025-11-25 client, 2026-07-28 backend)', () => {
  const { factory, events: audit } = recordingAuditor();
  let fixture: ModernTasksServer;
  let broker: { url: URL; stop(): Promise<void> };

  beforeAll(async () => {
    fixture = await startModernTasksServer();
    broker = await startTaskBroker({
      fixtureUrl: fixture.url,
      auditor: factory,
      revoked,
      tasks: { minPollInterval: { milliseconds: 20 } },
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.splice(0).map(client => client.close()));
    await broker?.stop();
    await fixture?.close();
  }, 30_000);

  it('asks the question on the tasks/result stream and answers the backend with tasks/update under its key', async () => {
    const asked: Asked[] = [];
    const client = await connect('alice', broker.url, () => accept({ confirm: true }), asked);
    const { task } = await startTask(client, 'confirm_delete');
    const updates = updatesOf(fixture).length;
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    // Asked once, under a gateway id, naming the broker's task.
    expect(asked).toHaveLength(1);
    expect(asked[0].id).toMatch(/^jobs:[A-Za-z0-9_-]{22,}$/);
    expect(asked[0].request.params).toMatchObject({
      mode: 'form',
      message: 'Delete the file?',
      _meta: { [RELATED_TASK]: { taskId: task.taskId } },
    });
    // The backend got the answer once, under the key it minted.
    const sent = updatesOf(fixture).slice(updates);
    expect(sent).toHaveLength(1);
    const [key] = Object.keys(sent[0]);
    expect(key).toMatch(/^confirm-\d+$/);
    expect(sent[0][key]).toEqual({ action: 'accept', content: { confirm: true } });
    // Each poll of the emulated tasks/result was one audited get (low severity).
    const ref = taskRefOf(task.taskId);
    const gets = audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'get');
    expect(gets.length).toBeGreaterThanOrEqual(2);
    for (const event of gets) {
      expect(event.meta).toEqual(
        expect.objectContaining({ clientEra: 'legacy', backendEra: 'modern' }),
      );
    }
    expect(audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'result')).toHaveLength(
      0,
    );
  });

  it('asks two questions at once, each once, and the task goes on with both answers', async () => {
    const asked: Asked[] = [];
    const client = await connect(
      'alice',
      broker.url,
      ({ request }) =>
        accept({ name: request.params.message === 'First name?' ? 'Ada' : 'Lovelace' }),
      asked,
    );
    const { task } = await startTask(client, 'multi_input');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Ada Lovelace' }]);
    expect(asked.map(a => a.request.params.message).sort()).toEqual(['First name?', 'Last name?']);
    expect(new Set(asked.map(a => a.id)).size).toBe(2);
  });

  it('counts an answer once, and only from the session that was asked', async () => {
    const bob = await connect('bob', broker.url);
    const outcomes: number[] = [];
    let aliceSession = '';
    let answered: Record<string, unknown> = {};
    const client = await connect('alice', broker.url, async ({ id }) => {
      answered = { id, result: { action: 'accept', content: { confirm: false } } };
      // Another person, in their own session, cannot answer it.
      outcomes.push((await postAnswer(broker.url, 'bob', sessionOf(bob), answered)).status);
      // The owner's answer, by hand: it counts.
      outcomes.push((await postAnswer(broker.url, 'alice', aliceSession, answered)).status);
      // The same answer again: used.
      outcomes.push((await postAnswer(broker.url, 'alice', aliceSession, answered)).status);
      return { action: 'decline' };
    });
    aliceSession = sessionOf(client);
    const updates = updatesOf(fixture).length;
    const { task } = await startTask(client, 'confirm_delete');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'kept' }]);
    expect(outcomes).toEqual([404, 202, 404]);
    // Only the owner's first answer reached the backend (the SDK's own, last, was refused).
    const sent = updatesOf(fixture).slice(updates);
    expect(sent).toHaveLength(1);
    expect(Object.values(sent[0])).toEqual([{ action: 'accept', content: { confirm: false } }]);
  });

  it('refuses the answer of a person whose use of the tool was taken away since the question', async () => {
    let refused: { status: number; body: any } | undefined;
    let session = '';
    const updates = updatesOf(fixture).length;
    const client = await connect('frank', broker.url, async ({ id }) => {
      revoked.add('user:default/frank');
      try {
        // The revocation is in force once the tool has left frank's list (decisions are cached).
        await waitFor(
          async () =>
            !(await client.listTools()).tools.some(tool => tool.name === 'jobs_confirm_delete'),
          'the revocation to take effect',
        );
        const response = await postAnswer(broker.url, 'frank', session, {
          id,
          result: { action: 'accept', content: { confirm: true } },
        });
        const text = await response.text();
        refused = { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
      } finally {
        revoked.delete('user:default/frank');
      }
      return { action: 'decline' };
    });
    session = sessionOf(client);
    const { task } = await startTask(client, 'confirm_delete');
    const closing = new AbortController();
    const collected = client.experimental.tasks
      .getTaskResult(task.taskId, CallToolResultSchema, { signal: closing.signal })
      .catch(() => 'closed');
    await waitFor(() => refused, 'the answer after the revocation');
    closing.abort();
    await collected;
    expect(refused).toEqual({
      status: 404,
      body: expect.objectContaining({
        error: expect.objectContaining({
          message:
            'This response answers an input of a task that is no longer available: Failed to retrieve task: Task not found',
        }),
      }),
    });
    // Nothing reached the backend; the task still waits for its input — once frank's use of the
    // tool is back in force (the cached denial would answer E1 until then).
    expect(updatesOf(fixture).length).toBe(updates);
    await waitFor(
      async () =>
        (await client.listTools()).tools.some(tool => tool.name === 'jobs_confirm_delete'),
      'the revocation to be lifted',
    );
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
    await client.experimental.tasks.cancelTask(task.taskId);
  });

  it('asks again on a later tasks/result what is still unanswered, and retires the ended stream’s id', async () => {
    const asked: Asked[] = [];
    let session = '';
    let firstAsked!: () => void;
    const askedOnFirst = new Promise<void>(resolve => {
      firstAsked = resolve;
    });
    let secondDone!: () => void;
    const second = new Promise<void>(resolve => {
      secondDone = resolve;
    });
    const lateOutcomes: number[] = [];
    const client = await connect(
      'alice',
      broker.url,
      async ({ id }) => {
        if (asked.length > 1) return accept({ confirm: true });
        firstAsked();
        // Answered only after the second stream got the task's result: this id went with its stream.
        await second;
        const late = { id, result: { action: 'accept', content: { confirm: false } } };
        lateOutcomes.push((await postAnswer(broker.url, 'alice', session, late)).status);
        return { action: 'decline' };
      },
      asked,
    );
    session = sessionOf(client);
    const { task } = await startTask(client, 'confirm_delete');
    const closing = new AbortController();
    const first = client.experimental.tasks
      .getTaskResult(task.taskId, CallToolResultSchema, { signal: closing.signal })
      .catch(() => 'closed');
    await askedOnFirst;
    closing.abort();
    expect(await first).toBe('closed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
    secondDone();
    await waitFor(() => lateOutcomes.length === 1, 'the late answer to the first stream’s id');
    expect(lateOutcomes).toEqual([404]);
    expect(asked).toHaveLength(2);
    expect(asked[1].id).not.toBe(asked[0].id);
    expect(asked[1].request.params.message).toBe('Delete the file?');
  });

  it('screens a URL-mode elicitation as every one: an https link named with its server, an http one refused', async () => {
    const asked: Asked[] = [];
    const client = new Client(
      { name: 'task-input-test', version: '1.0.0' },
      { capabilities: { elicitation: { form: {}, url: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push({ id: extra.requestId, request });
      return { action: 'accept' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(broker.url, {
        requestInit: {
          headers: { Authorization: mockCredentials.user.header('user:default/alice') },
        },
        fetch: recordingFetch(received),
      }),
    );
    clients.push(client);
    const signIn = (url: string) =>
      client.request(
        { method: 'tools/call', params: { name: 'jobs_sign_in', arguments: { url }, task: {} } },
        CreateTaskResultSchema,
      );
    const safe = (await signIn('https://idp.example.com/login')).task;
    const result = await client.experimental.tasks.getTaskResult(safe.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'signed in' }]);
    expect(asked.map(a => a.request.params)).toEqual([
      expect.objectContaining({
        mode: 'url',
        url: 'https://idp.example.com/login',
        message: 'MCP server "jobs" asks you to open a link: Sign in to continue',
      }),
    ]);
    const unsafe = (await signIn('http://idp.example.com/login')).task;
    await expect(
      client.experimental.tasks.getTaskResult(unsafe.taskId, CallToolResultSchema),
    ).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining(
        'MCP server "jobs" asked for input the broker does not relay',
      ),
    });
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked)).not.toContain('http://idp.example.com');
  });

  it('asks nothing of a client without the elicitation capability: the task waits', async () => {
    const client = await connect('carol', broker.url);
    const { task } = await startTask(client, 'confirm_delete');
    const ref = taskRefOf(task.taskId);
    const before = audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'get').length;
    const updates = updatesOf(fixture).length;
    const collected = client.experimental.tasks
      .getTaskResult(task.taskId, CallToolResultSchema)
      .then(
        () => 'answered',
        (error: { message: string }) => error.message,
      );
    // The stream polls on while the task waits for input nobody was asked.
    await waitFor(
      () =>
        audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'get').length >=
        before + 3,
      'three polls of the waiting task',
    );
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
    await client.experimental.tasks.cancelTask(task.taskId);
    expect(await collected).toContain('Task was cancelled');
    expect(updatesOf(fixture).length).toBe(updates);
  });

  it('never showed a client the backend’s task ids or input keys (runs last)', async () => {
    const texts = await Promise.all(received);
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) expect(text).not.toMatch(BACKEND_IDS);
  });
});

const { engines } = replicaDatabases('task input across replicas');

describe.each(engines)(
  'task input across replicas (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);

    it('is asked on A’s tasks/result stream and answered through B, once', async () => {
      const fixture = await startModernTasksServer();
      const { factory } = recordingAuditor();
      const start = (knex: Knex) =>
        startTaskBroker({
          fixtureUrl: fixture.url,
          auditor: factory,
          revoked: new Set(),
          knex,
          tasks: { minPollInterval: { milliseconds: 20 } },
        });
      const a = await start(knexes[0]);
      const b = await start(knexes[1]);
      try {
        const outcomes: number[] = [];
        let session = '';
        const client = await connect('alice', a.url, async ({ id }) => {
          const answer = { id, result: { action: 'accept', content: { confirm: true } } };
          outcomes.push((await postAnswer(b.url, 'alice', session, answer)).status);
          return { action: 'decline' }; // the SDK's own answer, on A: the id is used already
        });
        session = sessionOf(client);
        const { task } = await startTask(client, 'confirm_delete');
        const result = await client.experimental.tasks.getTaskResult(
          task.taskId,
          CallToolResultSchema,
        );
        expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
        expect(outcomes).toEqual([202]);
        expect(updatesOf(fixture)).toHaveLength(1);
        for (const text of await Promise.all(received)) expect(text).not.toMatch(BACKEND_IDS);
      } finally {
        await Promise.all(clients.splice(0).map(client => client.close()));
        await a.stop();
        await b.stop();
        await fixture.close();
      }
    }, 60_000);
  },
);
