/*
 * Input during a 2025-11-25 backend's task, for a 2025-11-25 client (docs/contracts/tasks-and-apps.md
 * §2.12.1): through the whole plugin (startTestBackend) with the real legacy tasks fixture, whose
 * `approve` task goes `input_required` and asks a form elicitation related to the task on the
 * next `tasks/result` stream of its backend session, and the official SDK 1.x client. Two plugin
 * instances on one database (SQLite and PostgreSQL) are two replicas: the task is created on A,
 * its result read on B (so the question travels from A's pinned backend session through B), and
 * the client's answer is posted to A while B holds the stream. Every answer a client receives is
 * scanned for the backend's own task ids.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import { startTasksServer, type LegacyTasksServer } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { recordingFetch } from './tasks/__testUtils__/recordingFetch';
import { startTaskBroker, type TaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const GATEWAY_ID = /^jobs:[A-Za-z0-9_-]{22,}$/;
const ELICITING = { elicitation: { form: {} } };

/** Users whose `mcp-broker.tool.use` is taken away (none here; the broker's test permission). */
const revoked = new Set<string>();

/** Everything every broker answered to a POST, as text (scanned for the backend's ids). */
const received: Array<Promise<string>> = [];

/** `fetch` that sends the client's answers (JSON-RPC responses) to `answersTo` instead. */
function answeringThrough(answersTo: () => URL | undefined): typeof fetch {
  const recording = recordingFetch(received);
  return (input, init) => {
    const target = answersTo();
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const isAnswer = body !== undefined && 'id' in body && !('method' in body);
    return recording(isAnswer && target !== undefined ? target : input, init);
  };
}

const { engines } = replicaDatabases('legacy task input across replicas');

describe.each(engines)(
  'input during a 2025-11-25 task, 2025-11-25 client (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);
    let fixture: LegacyTasksServer;
    let a: TaskBroker;
    let b: TaskBroker;
    const clients: Client[] = [];

    /** `user`'s SDK client on `url` declaring `capabilities`; its answers go to `answersTo`. */
    async function connect(
      user: string,
      url: URL,
      capabilities: Record<string, unknown> = {},
      answersTo?: () => URL | undefined,
    ) {
      const client = new Client({ name: 'task-input-test', version: '1.0.0' }, { capabilities });
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: {
          headers: { Authorization: mockCredentials.user.header(`user:default/${user}`) },
        },
        fetch: answeringThrough(answersTo ?? (() => undefined)),
      });
      await client.connect(transport);
      clients.push(client);
      return { client, sessionId: transport.sessionId! };
    }

    /** A raw answer of `user` on session `sessionId` of the broker at `url`. */
    async function rawAnswer(url: URL, user: string, sessionId: string, answer: unknown) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: mockCredentials.user.header(`user:default/${user}`),
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': sessionId,
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify(answer),
      });
      return response.status;
    }

    const approve = (client: Client, target: string) =>
      client.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_approve', arguments: { target }, task: {} },
        },
        CreateTaskResultSchema,
      );

    /** The backend's ids of the tasks the broker asked about. */
    function backendTaskIds(): string[] {
      return fixture.requests.flatMap(r => (r.taskId === undefined ? [] : [r.taskId]));
    }

    beforeAll(async () => {
      received.length = 0;
      fixture = await startTasksServer();
      const { factory } = recordingAuditor();
      a = await startTaskBroker({
        fixtureUrl: fixture.url,
        auditor: factory,
        revoked,
        knex: knexes[0],
      });
      b = await startTaskBroker({
        fixtureUrl: fixture.url,
        auditor: factory,
        revoked,
        knex: knexes[1],
      });
      for (const replica of [a, b]) {
        const { client } = await connect('alice', replica.url);
        await waitFor(
          async () => (await client.listTools()).tools.some(t => t.name === 'jobs_approve'),
          'the tasks fixture to be listed',
        );
      }
    }, 60_000);

    afterAll(async () => {
      await Promise.all(clients.map(client => client.close()));
      await a?.stop();
      await b?.stop();
      await fixture?.close();
    }, 30_000);

    it('asks the question on the client’s tasks/result stream with a gateway id and the broker task id, and completes with the answer given on the other replica', async () => {
      const creator = await connect('alice', a.url, ELICITING);
      const { task } = await approve(creator.client, 'web');
      expect(task.status).toBe('input_required');

      // The result is read on B; the client's answer goes to A.
      const reader = await connect('alice', b.url, ELICITING, () => a.url);
      const bob = await connect('bob', a.url, ELICITING);
      const asked: ElicitRequest[] = [];
      const refusedToOthers: number[] = [];
      const gatewayIds: unknown[] = [];
      reader.client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        asked.push(request);
        gatewayIds.push(extra.requestId);
        // Another person, on their own session, cannot answer it.
        refusedToOthers.push(
          await rawAnswer(a.url, 'bob', bob.sessionId, {
            jsonrpc: '2.0',
            id: extra.requestId,
            result: { action: 'accept', content: { approved: false } },
          }),
        );
        return { action: 'accept', content: { approved: true } } satisfies ElicitResult;
      });
      const result = await reader.client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'approved web' }]);
      expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });

      expect(asked).toHaveLength(1);
      expect(asked[0].params).toMatchObject({
        mode: 'form',
        message: 'Approve deploying web?',
        _meta: { [RELATED_TASK]: { taskId: task.taskId } },
      });
      expect(refusedToOthers).toEqual([404]);

      // The backend got the answer once, with its own id, on the session that created the task.
      const pinned = fixture.requests.find(r => r.method === 'tools/call' && r.session)?.session;
      expect(fixture.requests.filter(r => r.method === 'tasks/result').map(r => r.session)).toEqual(
        [pinned],
      );
      expect(fixture.answers).toEqual([
        {
          id: expect.any(Number),
          session: pinned,
          result: { action: 'accept', content: { approved: true } },
        },
      ]);

      // The client saw a gateway id, never the backend's; used, it reaches nobody again.
      expect(gatewayIds).toEqual([expect.stringMatching(GATEWAY_ID)]);
      expect(
        await rawAnswer(a.url, 'alice', reader.sessionId, {
          jsonrpc: '2.0',
          id: gatewayIds[0],
          result: { action: 'accept', content: { approved: true } },
        }),
      ).toBe(404);
      expect(fixture.answers).toHaveLength(1);

      for (const text of await Promise.all(received)) {
        for (const backendId of backendTaskIds()) expect(text).not.toContain(backendId);
      }
    }, 60_000);

    it('refuses the question towards the backend when the client reading the result declared no elicitation: the task fails', async () => {
      const creator = await connect('alice', a.url, ELICITING);
      const { task } = await approve(creator.client, 'api');
      const reader = await connect('alice', b.url);
      const answersBefore = fixture.answers.length;
      const result = await reader.client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result).toMatchObject({ isError: true });
      expect(fixture.answers.slice(answersBefore)).toEqual([
        expect.objectContaining({
          error: {
            code: -32601,
            message:
              'elicitation/create is not available: the client of this request did not declare the elicitation.form capability',
          },
        }),
      ]);
    }, 60_000);

    it('opens the pinned session with the creating client’s capabilities: a creator without elicitation is never asked', async () => {
      const creator = await connect('alice', a.url);
      const { task } = await approve(creator.client, 'db');
      const reader = await connect('alice', b.url, ELICITING);
      let asked = 0;
      reader.client.setRequestHandler(ElicitRequestSchema, async () => {
        asked += 1;
        return { action: 'decline' };
      });
      const result = await reader.client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      // The fixture could not ask (its session declared no form elicitation) and failed the task.
      expect(result).toMatchObject({
        isError: true,
        content: [
          { type: 'text', text: expect.stringMatching(/does not support form elicitation/) },
        ],
      });
      expect(asked).toBe(0);
    }, 60_000);

    it('asks what the backend asks before its CreateTaskResult on the call’s stream, the answer given on the other replica', async () => {
      const creator = await connect('alice', a.url, ELICITING, () => b.url);
      const asked: Array<{ id: unknown; request: ElicitRequest }> = [];
      creator.client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        asked.push({ id: extra.requestId, request });
        return { action: 'accept', content: { confirmed: true } } satisfies ElicitResult;
      });
      const answersBefore = fixture.answers.length;
      const { task } = await creator.client.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_confirm_deploy', arguments: { target: 'docs' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      expect(asked).toEqual([
        {
          id: expect.stringMatching(GATEWAY_ID),
          request: expect.objectContaining({
            params: expect.objectContaining({ mode: 'form', message: 'Deploy docs?' }),
          }),
        },
      ]);
      expect(fixture.answers.slice(answersBefore)).toEqual([
        expect.objectContaining({
          id: expect.any(Number),
          result: { action: 'accept', content: { confirmed: true } },
        }),
      ]);
      const result = await creator.client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'confirmed docs' }]);
    }, 60_000);
  },
);
