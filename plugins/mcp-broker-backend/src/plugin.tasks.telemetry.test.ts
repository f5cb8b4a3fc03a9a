/*
 * Long-running tasks in the broker's telemetry (docs/contracts/tasks-and-apps.md §2.14, §4):
 * the whole plugin (startTestBackend) with the real 2025-11-25 tasks fixture, which records every
 * request's `_meta` and `traceparent` header, and the official SDK 1.x client. The OpenTelemetry
 * SDK runs for real, keeping what it records in memory (InMemoryTelemetry).
 */
import type { AddressInfo } from 'node:net';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  startTasksServer,
  type LegacyTasksServer,
  type RecordedTaskRequest,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { SpanKind } from '@opentelemetry/api';
import { mcpBrokerPlugin } from './plugin';
import { InMemoryTelemetry } from './telemetry/__testUtils__/inMemoryTelemetry';
import { waitFor } from './testing/waitFor';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('tasks in telemetry (startTestBackend, the real tasks fixture, the OpenTelemetry SDK in memory)', () => {
  const sdk = new InMemoryTelemetry();
  let fixture: LegacyTasksServer;
  let stop: () => Promise<void>;
  let endpoint: URL;
  const clients: Client[] = [];

  beforeAll(async () => {
    sdk.install();
    fixture = await startTasksServer();
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: { mcpBroker: { servers: [{ name: 'jobs', url: fixture.url }] } },
        }),
      ],
    });
    stop = async () => server.stop?.();
    endpoint = new URL(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker/mcp`,
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close()));
    await stop?.();
    await fixture?.close();
    await sdk.uninstall();
  }, 30_000);

  /** A client of `user` whose every request carries the client's trace context as a header. */
  async function connect(user: string): Promise<Client> {
    const client = new Client({ name: 'tasks-telemetry-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(endpoint, {
        requestInit: {
          headers: {
            Authorization: mockCredentials.user.header(`user:default/${user}`),
            traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
          },
        },
      }),
    );
    clients.push(client);
    await waitFor(
      async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
      'the tasks fixture to be listed',
    );
    return client;
  }

  it('sends every task request with the broker’s CLIENT span context in _meta and the headers, never the client’s', async () => {
    const client = await connect('alice');
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'jobs_deploy',
          arguments: { target: 'traced' },
          task: {},
          _meta: {
            traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
            baggage: 'user=alice',
            progressToken: 'p-1',
          },
        },
      },
      CreateTaskResultSchema,
    );
    const job = await fixture.started('traced');
    await client.experimental.tasks.getTask(task.taskId);
    await fixture.finish('traced', 'completed');
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    // Ended: the backend refuses the cancel, which passes (and the task is read once more).
    await client.experimental.tasks.cancelTask(task.taskId).catch(() => undefined);

    const sent = fixture.requests.filter(
      r =>
        r.session === job.session &&
        (r.taskId === job.taskId || (r.method === 'tools/call' && r.meta?.progressToken === 'p-1')),
    );
    expect(sent.map(r => r.method)).toEqual([
      'tools/call',
      'tasks/get',
      'tasks/result',
      'tasks/get',
      'tasks/cancel',
      'tasks/get',
    ]);
    const clientSpans = sdk
      .spans()
      .filter(s => s.kind === SpanKind.CLIENT && s.spanContext().traceId === CLIENT_TRACE);
    const traceparentOf = (r: RecordedTaskRequest) => {
      const span = clientSpans.find(
        s => s.name === `${r.method} deploy` && r.traceparent?.includes(s.spanContext().spanId),
      );
      return span && `00-${CLIENT_TRACE}-${span.spanContext().spanId}-01`;
    };
    for (const request of sent) {
      // The broker's own CLIENT span of that very request, in both carriers; no baggage.
      expect(traceparentOf(request)).toEqual(expect.any(String));
      expect(request.traceparent).toBe(traceparentOf(request));
      expect(request.meta?.traceparent).toBe(request.traceparent);
      expect(request.meta).not.toHaveProperty('baggage');
    }
    expect(sent[0].meta).toEqual({ progressToken: 'p-1', traceparent: sent[0].traceparent });
    expect(new Set(sent.map(r => r.traceparent)).size).toBe(sent.length);
  });
});
