/*
 * A pinned backend session the backend forgot (docs/contracts/tasks-and-apps.md §2.11): the
 * broker replaces it once — a new backend session of the task's person, the request sent again
 * there — and, when the backend still has the task, records the new session in every row of the
 * forgotten one, so every replica goes there from then on; when the backend lost the task with
 * the session, E3 and the row is deleted. Through two plugin instances on one database (SQLite
 * and PostgreSQL) with the real legacy tasks fixture, which forgets its sessions as a restarted
 * server would, keeping its tasks (`keepTasks`) or not, and the official SDK 1.x client.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import { startTasksServer } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { TASKS_TABLE } from './store/DatabaseTaskStore';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

const { engines } = replicaDatabases('replaced pinned session tests');

describe.each(engines)('a pinned session the backend forgot, two replicas on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it('is replaced once and the new session recorded in every row of the old one; a task lost with it answers E3', async () => {
    const fixture = await startTasksServer();
    const { factory } = recordingAuditor();
    const replicas = await Promise.all(
      knexes.map(knex =>
        // Each stopped before the database is closed.
        startTaskBroker({
          fixtureUrl: fixture.url,
          auditor: factory,
          revoked: new Set(),
          knex,
          // The test counts the backend's requests: the watcher, which the clients' GET
          // streams start, polls nothing while it runs.
          tasks: { minPollInterval: { hours: 1 } },
          stopsBackend: true,
        }),
      ),
    );
    const clients: Client[] = [];
    const connect = async (url: URL) => {
      const client = new Client({ name: 'replaced-session-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header('user:default/alice') },
          },
        }),
      );
      clients.push(client);
      await waitFor(
        async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
        'the tasks fixture to be listed',
      );
      return client;
    };
    const sessionsOf = async (taskIds: string[]) =>
      (
        await knexes[1](TASKS_TABLE)
          .whereIn('task_id', taskIds)
          .orderBy('task_id')
          .select('backend_session_id')
      ).map(row => row.backend_session_id);
    try {
      const [onA, onB] = [await connect(replicas[0].url), await connect(replicas[1].url)];
      const start = async (target: string) =>
        (
          await onA.request(
            {
              method: 'tools/call',
              params: { name: 'jobs_deploy', arguments: { target }, task: {} },
            },
            CreateTaskResultSchema,
          )
        ).task.taskId;
      const one = await start('one');
      const two = await start('two');
      const [jobOne, jobTwo] = await Promise.all([fixture.started('one'), fixture.started('two')]);
      const forgotten = jobOne.session;
      expect(jobTwo.session).toBe(forgotten);
      expect(await sessionsOf([one, two])).toEqual([forgotten, forgotten]);

      // The backend restarts with its tasks: B's get finds the forgotten session and replaces it.
      await fixture.forgetSessions({ keepTasks: true });
      const sentBefore = fixture.requests.length;
      expect((await onB.experimental.tasks.getTask(one)).status).toBe('working');
      const gets = fixture.requests
        .slice(sentBefore)
        .filter(r => r.method === 'tasks/get' && r.taskId === jobOne.taskId);
      expect(gets.map(r => r.session === forgotten)).toEqual([true, false]);
      const replacement = gets[1].session;
      // Every row of the forgotten session names the new one: A goes there at once.
      expect(await sessionsOf([one, two])).toEqual([replacement, replacement]);
      const sentByA = fixture.requests.length;
      expect((await onA.experimental.tasks.getTask(two)).status).toBe('working');
      await fixture.finish('two', 'completed');
      const result = await onA.experimental.tasks.getTaskResult(two, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'deployed two' }]);
      const fromA = fixture.requests.slice(sentByA).filter(r => r.taskId === jobTwo.taskId);
      expect(fromA.length).toBeGreaterThan(0);
      expect(new Set(fromA.map(r => r.session))).toEqual(new Set([replacement]));

      // The backend restarts without its tasks: replaced once, the task is unknown there: E3.
      await fixture.forgetSessions();
      const lost = await onB.experimental.tasks.getTask(one).catch(e => e);
      expect(lost).toMatchObject({ code: -32602, data: { reason: 'task-lost', server: 'jobs' } });
      expect(await sessionsOf([one])).toEqual([]);
      const retried = fixture.requests.filter(
        r => r.method === 'tasks/get' && r.taskId === jobOne.taskId,
      );
      expect(retried.slice(-2).map(r => r.session === replacement)).toEqual([true, false]);
    } finally {
      await Promise.all(clients.map(client => client.close()));
      await Promise.all(replicas.map(replica => replica.stop()));
      await fixture.close();
    }
  }, 60_000);
});
