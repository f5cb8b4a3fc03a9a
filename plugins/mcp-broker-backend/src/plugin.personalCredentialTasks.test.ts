/*
 * Tasks and a server that acts with each person's own credential (docs/contracts/tasks-and-apps.md
 * §2.2, spec §11): the broker keeps no task there — a 2025-11-25 call's `params.task` is
 * removed and the call runs plain, a 2026-07-28 call is sent without the tasks extension, a
 * 2026-07-28 call to a 2025-11-25 backend is not made a task — while the tools keep their
 * `execution.taskSupport`. Through the whole plugin (startTestBackend) with the real tasks
 * fixtures of both eras as `jobs` in `userCredential` mode, the person's credential stored from
 * the broker's page first; the official SDK 1.x client and raw 2026-07-28 requests.
 */
import { randomBytes } from 'node:crypto';
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  startModernTasksServer,
  startTasksServer,
  TASKS_EXTENSION,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ListTasksResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { modernRequest } from './tasks/__testUtils__/modernRequest';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

/** The broker's origin: a credential is stored from its page (the mock auth's cookie). */
const BACKEND = 'http://localhost:7007';

/** A broker with the fixture at `url` as `jobs` in `userCredential` mode, mock's key stored. */
async function startPersonalBroker(url: string) {
  const broker = await startTaskBroker({
    fixtureUrl: url,
    auditor: recordingAuditor().factory,
    revoked: new Set(),
    rootConfig: { backend: { baseUrl: BACKEND } },
    extra: {
      servers: [{ name: 'jobs', url, auth: { mode: 'userCredential', header: 'X-Api-Key' } }],
      credentialEncryptionKey: randomBytes(32).toString('base64'),
    },
  });
  const stored = await fetch(new URL('/api/mcp-broker/credentials/jobs', broker.url), {
    method: 'PUT',
    headers: { Origin: BACKEND, 'Content-Type': 'application/json' },
    body: JSON.stringify({ value: 'mock-key' }),
  });
  expect(stored.status).toBe(200);
  return broker;
}

/** A 2026-07-28 request of the mock user (whose credential is stored), the extension declared. */
const modern = (url: URL, method: string, params: Record<string, unknown>) =>
  modernRequest(url, 'mock', method, params);

describe('tasks and a server in a person’s credential mode', () => {
  it('runs a 2025-11-25 task-augmented call plain (task removed) and a 2026-07-28 call plain, and keeps execution.taskSupport', async () => {
    const fixture = await startTasksServer();
    const broker = await startPersonalBroker(fixture.url);
    const client = new Client({ name: 'personal-tasks-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(broker.url, {
          requestInit: { headers: { Authorization: mockCredentials.user.header() } },
        }),
      );
      await waitFor(
        async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_nap'),
        'the tasks fixture to be listed',
      );
      const { tools } = await client.listTools();
      expect(
        tools.filter(t => t.name.startsWith('jobs_')).map(t => [t.name, t.execution?.taskSupport]),
      ).toEqual([
        ['jobs_deploy', 'required'],
        ['jobs_nap', 'optional'],
        ['jobs_approve', 'required'],
        ['jobs_confirm_deploy', 'required'],
      ]);
      // With `task` the fixture would answer a task: without it, at once.
      const plain = await client.request(
        { method: 'tools/call', params: { name: 'jobs_nap', arguments: {}, task: {} } },
        CallToolResultSchema,
      );
      expect(plain).not.toHaveProperty('task');
      expect(plain.content).toEqual([{ type: 'text', text: 'napped' }]);
      const { tasks } = await client.request(
        { method: 'tasks/list', params: {} },
        ListTasksResultSchema,
      );
      expect(tasks).toEqual([]);
      // A declaring 2026-07-28 client's call to this 2025-11-25 backend is not made a task.
      const crossEra = await modern(broker.url, 'tools/call', { name: 'jobs_nap', arguments: {} });
      expect(crossEra.message.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'napped' }],
      });
      const calls = fixture.requests.filter(r => r.method === 'tools/call');
      expect(calls).toHaveLength(2);
    } finally {
      await client.close();
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);

  it('sends a declaring 2026-07-28 client’s call to a 2026-07-28 backend without the tasks extension', async () => {
    const fixture = await startModernTasksServer();
    const broker = await startPersonalBroker(fixture.url);
    try {
      await waitFor(async () => {
        const { message } = await modern(broker.url, 'tools/list', {});
        return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_nap');
      }, 'the modern tasks fixture to be listed');
      const answer = await modern(broker.url, 'tools/call', { name: 'jobs_nap', arguments: {} });
      expect(answer.message.result.resultType).toBe('complete');
      const [call] = fixture.requests.filter(r => r.method === 'tools/call');
      expect(call.meta).toBeDefined();
      expect(JSON.stringify(call.meta)).not.toContain(TASKS_EXTENSION);
    } finally {
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});
