/*
 * A task whose tool has left its server's list (docs/contracts/tasks-and-apps.md §2.8): every
 * operation and every notification is decided on the entry the task's row keeps (server, tool,
 * annotations) with the same decision as a listed tool — the owner keeps the task, a person whose
 * `tool.use` is taken away gets E1 exactly as for an unknown id. Through the whole plugin
 * (startTestBackend) with the real legacy tasks fixture, which retires `deploy` from the list of
 * every session as a server update would (`retireTool`), and the official SDK 1.x client. On one
 * replica in memory, on SQLite and on PostgreSQL (the row, and its annotations, read back from
 * the table).
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import { startTasksServer } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ListTasksResultSchema,
  TaskStatusNotificationSchema,
  type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

const { engines } = replicaDatabases('retired task tool tests');
const stores: Array<{ label: string; engine?: (typeof engines)[number] }> = [
  { label: 'memory' },
  ...engines.map(engine => ({ label: engine.label, engine })),
];

describe.each(stores)('a task whose tool left the list ($label)', ({ engine }) => {
  const knexes: Knex[] = engine === undefined ? [] : replicaDatabaseForSuite(engine);

  it('stays its owner’s — get, list, result, notifications — and answers E1 once tool.use is taken away', async () => {
    const fixture = await startTasksServer();
    const broker = await startTaskBroker({
      fixtureUrl: fixture.url,
      auditor: recordingAuditor().factory,
      revoked,
      knex: knexes[0],
      tasks: { minPollInterval: { milliseconds: 20 } },
      // Stopped before its database is closed.
      stopsBackend: true,
    });
    const client = new Client({ name: 'retired-tool-test', version: '1.0.0' });
    const notes: TaskStatusNotification['params'][] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, async notification => {
      notes.push(notification.params);
    });
    const openStreams = async () => {
      const response = await fetch(new URL('/api/mcp-broker/status', broker.url), {
        headers: { Authorization: mockCredentials.user.header('user:default/admin') },
      });
      return (await response.json()).clients.eventStreams;
    };
    const listed = async () => (await client.listTools()).tools.map(tool => tool.name);
    try {
      await client.connect(
        new StreamableHTTPClientTransport(broker.url, {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header('user:default/alice') },
          },
        }),
      );
      await waitFor(async () => (await listed()).includes('jobs_deploy'), 'deploy to be listed');
      await waitFor(async () => (await openStreams()) === 1, 'the GET stream to open');
      const { task } = await client.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'kept' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      await fixture.started('kept');

      fixture.retireTool('deploy');
      await waitFor(async () => !(await listed()).includes('jobs_deploy'), 'deploy to go');
      // Decided on the row: still the owner's.
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
      const { tasks } = await client.request(
        { method: 'tasks/list', params: {} },
        ListTasksResultSchema,
      );
      expect(tasks.map(listedTask => listedTask.taskId)).toEqual([task.taskId]);
      await fixture.finish('kept', 'completed');
      await waitFor(
        () => notes.some(note => note.taskId === task.taskId && note.status === 'completed'),
        'the GET stream to hear of the end',
      );
      const result = await client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'deployed kept' }]);

      // Taken away: the same answer as an id that exists nowhere, and nothing sent.
      const unknown = await client.experimental.tasks.getTask('jobs:unknown').catch(e => e);
      expect(unknown.code).toBe(-32602);
      revoked.add('user:default/alice');
      await waitFor(
        async () =>
          (await client.experimental.tasks.getTask(task.taskId).catch(e => e)).message ===
          unknown.message,
        'the revocation to reach the decision cache',
      );
      const sentBefore = fixture.requests.length;
      expect((await client.experimental.tasks.getTask(task.taskId).catch(e => e)).data).toEqual(
        unknown.data,
      );
      expect(fixture.requests.slice(sentBefore).filter(r => r.method.startsWith('tasks/'))).toEqual(
        [],
      );
    } finally {
      revoked.delete('user:default/alice');
      await client.close();
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});
