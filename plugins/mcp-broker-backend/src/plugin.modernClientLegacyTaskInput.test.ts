/*
 * Input during a 2025-11-25 backend's task, for a 2026-07-28 client (docs/contracts/tasks-and-apps.md
 * §2.12.4 "Input"): through the whole plugin (startTestBackend) with the real legacy tasks
 * fixture, whose `approve` task goes `input_required` and asks a form elicitation on the next
 * `tasks/result` stream of its backend session, and a stateless client speaking raw 2026-07-28
 * HTTP. Two plugin instances on one database (SQLite and PostgreSQL) are two replicas: the task
 * is created on A, its question read on B (which reads the `tasks/result` stream), shown on A
 * too, and answered with `tasks/update` on A. Every answer a client receives is scanned for the
 * backend's own task ids.
 */
import { startTasksServer, type LegacyTasksServer } from '@internal/test-mcp-backends';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { DECLARING_TASKS, modernRequest } from './tasks/__testUtils__/modernRequest';
import { startTaskBroker, type TaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

const E1 = {
  code: -32602,
  message: 'Failed to retrieve task: Task not found',
  data: { reason: 'task-not-found' },
};
const INPUT_KEY = /^jobs:[A-Za-z0-9_-]{22}$/;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/** The tasks extension and form elicitation, as the client declares them. */
const ELICITING = { ...DECLARING_TASKS, elicitation: { form: {} } };

/** Users whose `mcp-broker.tool.use` is taken away (none here). */
const revoked = new Set<string>();

/** Everything every broker answered, as text (scanned for the backend's ids). */
const received: string[] = [];

const modern = (url: URL, user: string, method: string, params: Record<string, unknown>) =>
  modernRequest(url, user, method, params, { capabilities: ELICITING, received });

const { engines } = replicaDatabases('legacy task input for 2026-07-28 clients across replicas');

describe.each(engines)(
  'input during a 2025-11-25 task, 2026-07-28 client (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);
    let fixture: LegacyTasksServer;
    let a: TaskBroker;
    let b: TaskBroker;

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
        await waitFor(async () => {
          const { message } = await modern(replica.url, 'alice', 'tools/list', {});
          return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_approve');
        }, 'the legacy tasks fixture to be listed');
      }
    }, 60_000);

    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await fixture?.close();
    }, 30_000);

    /** Waits until `user`'s `tasks/get` of `taskId` on `url` shows `status`. */
    async function seen(url: URL, taskId: string, status: string) {
      let task: any;
      await waitFor(async () => {
        task = (await modern(url, 'alice', 'tasks/get', { taskId })).message.result;
        return task?.status === status;
      }, `the task to be ${status}`);
      return task;
    }

    it('shows the backend’s question as inputRequests on every replica and passes the answer of tasks/update once', async () => {
      const created = await modern(a.url, 'alice', 'tools/call', {
        name: 'jobs_approve',
        arguments: { target: 'web' },
      });
      const { taskId } = created.message.result;
      expect(created.message.result.resultType).toBe('task');

      // Read on B: B reads the task's tasks/result and records the question.
      const asking = await seen(b.url, taskId, 'input_required');
      const keys = Object.keys(asking.inputRequests);
      expect(keys).toEqual([expect.stringMatching(INPUT_KEY)]);
      const [key] = keys;
      expect(asking.inputRequests[key]).toEqual({
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Approve deploying web?',
          requestedSchema: {
            type: 'object',
            properties: { approved: { type: 'boolean' } },
            required: ['approved'],
          },
        },
      });
      // A shows the same question (the shared table), without reading the stream itself.
      const onA = (await modern(a.url, 'alice', 'tasks/get', { taskId })).message.result;
      expect(onA).toMatchObject({ status: 'input_required', inputRequests: asking.inputRequests });
      expect(fixture.requests.filter(r => r.method === 'tasks/result')).toHaveLength(1);

      // Another person cannot answer it: their update is E1, and the question stays open.
      const foreign = await modern(a.url, 'bob', 'tasks/update', {
        taskId,
        inputResponses: { [key]: { action: 'accept', content: { approved: false } } },
      });
      expect(foreign.message.error).toEqual(E1);
      expect(fixture.answers).toEqual([]);

      // The owner answers on A; an unknown key is ignored.
      const answered = await modern(a.url, 'alice', 'tasks/update', {
        taskId,
        inputResponses: {
          [key]: { action: 'accept', content: { approved: true } },
          'jobs:AAAAAAAAAAAAAAAAAAAAAA': { action: 'decline' },
        },
      });
      expect(answered.status).toBe(200);
      expect(answered.message.result).toMatchObject({ resultType: 'complete' });
      const pinned = fixture.requests.find(r => r.method === 'tasks/result')?.session;
      const backendTaskId = fixture.requests.find(r => r.method === 'tasks/result')?.taskId;
      expect(fixture.answers).toEqual([
        {
          id: expect.any(Number),
          session: pinned,
          result: {
            action: 'accept',
            content: { approved: true },
            _meta: { [RELATED_TASK]: { taskId: backendTaskId } },
          },
        },
      ]);

      const done = await seen(a.url, taskId, 'completed');
      expect(done.result.content).toEqual([{ type: 'text', text: 'approved web' }]);
      expect(done.inputRequests).toBeUndefined();

      // Used: the same answer again is acked and reaches nobody.
      const again = await modern(a.url, 'alice', 'tasks/update', {
        taskId,
        inputResponses: { [key]: { action: 'accept', content: { approved: true } } },
      });
      expect(again.message.result).toMatchObject({ resultType: 'complete' });
      expect(fixture.answers).toHaveLength(1);

      for (const text of received) expect(text).not.toContain(backendTaskId);
    }, 60_000);

    it('asks what the backend asks before its task exists as an input_required round; the retry answers it and gets the task', async () => {
      const answersBefore = fixture.answers.length;
      const params = { name: 'jobs_confirm_deploy', arguments: { target: 'docs' } };
      const round = await modern(a.url, 'alice', 'tools/call', params);
      expect(round.status).toBe(200);
      const { inputRequests, requestState } = round.message.result;
      expect(round.message.result).toMatchObject({ resultType: 'input_required' });
      expect(round.message.result.taskId).toBeUndefined();
      expect(typeof requestState).toBe('string');
      const [key] = Object.keys(inputRequests);
      expect(Object.keys(inputRequests)).toEqual([key]);
      expect(inputRequests[key]).toEqual({
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Deploy docs?',
          requestedSchema: {
            type: 'object',
            properties: { confirmed: { type: 'boolean' } },
            required: ['confirmed'],
          },
        },
      });
      // Nothing answered the backend yet: its call is held.
      expect(fixture.answers.slice(answersBefore)).toEqual([]);

      // Another person's retry with the state is refused, and nothing reaches the backend.
      const foreign = await modern(a.url, 'bob', 'tools/call', {
        ...params,
        inputResponses: { [key]: { action: 'accept', content: { confirmed: true } } },
        requestState,
      });
      expect(foreign.status).toBe(400);
      expect(foreign.message.error).toMatchObject({
        code: -32602,
        data: { reason: 'foreign-principal' },
      });
      expect(fixture.answers.slice(answersBefore)).toEqual([]);

      const retried = await modern(a.url, 'alice', 'tools/call', {
        ...params,
        inputResponses: { [key]: { action: 'accept', content: { confirmed: true } } },
        requestState,
      });
      // confirm_deploy answers with a task that has already completed.
      expect(retried.message.result).toMatchObject({ resultType: 'task', status: 'completed' });
      expect(retried.message.result.requestState).toBeUndefined();
      expect(retried.message.result.inputRequests).toBeUndefined();
      // The answer went to the session that asked, with the backend's own id.
      expect(fixture.answers.slice(answersBefore)).toEqual([
        expect.objectContaining({
          id: expect.any(Number),
          result: { action: 'accept', content: { confirmed: true } },
        }),
      ]);
      const done = await seen(a.url, retried.message.result.taskId, 'completed');
      expect(done.result.content).toEqual([{ type: 'text', text: 'confirmed docs' }]);

      // The state answered one retry.
      const replayed = await modern(a.url, 'alice', 'tools/call', {
        ...params,
        inputResponses: { [key]: { action: 'accept', content: { confirmed: true } } },
        requestState,
      });
      expect(replayed.status).toBe(400);
      expect(replayed.message.error.data).toEqual({ reason: 'replayed' });
    }, 60_000);
  },
);
