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
import { MetricName } from './telemetry/BrokerMetrics';
import { InMemoryTelemetry, pointWith } from './telemetry/__testUtils__/inMemoryTelemetry';
import { waitFor } from './testing/waitFor';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const PER_PERSON = 2;

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
          data: {
            mcpBroker: {
              servers: [{ name: 'jobs', url: fixture.url }],
              tasks: { perPerson: PER_PERSON },
            },
          },
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

  /**
   * A client of `user`; `traced`: every request carries the client's trace context as a header
   * (else each request starts a trace of its own).
   */
  async function connect(user: string, traced = true): Promise<Client> {
    const client = new Client({ name: 'tasks-telemetry-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(endpoint, {
        requestInit: {
          headers: {
            Authorization: mockCredentials.user.header(`user:default/${user}`),
            ...(traced ? { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } : {}),
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

  /** The value of counter `name` at the point with `attributes` (0 when there is none). */
  async function count(name: string, attributes: Record<string, string>): Promise<number> {
    const points = await sdk.points(name);
    const point = points.find(p =>
      Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
    );
    return point?.value ?? 0;
  }

  it('measures task methods with their tool, counts tasks created, ended (once) and refused, and links each task request’s span to the creating one', async () => {
    const created = {
      'mcp_broker.server': 'jobs',
      'mcp_broker.era': 'legacy',
      'mcp_broker.backend.era': 'legacy',
    };
    const completed = { 'mcp_broker.server': 'jobs', 'mcp_broker.task.status': 'completed' };
    const refused = { 'mcp_broker.server': 'jobs' };
    const before = {
      created: await count(MetricName.tasksCreated, created),
      completed: await count(MetricName.tasksEnded, completed),
      refused: await count(MetricName.taskLimitRefusals, refused),
    };
    const client = await connect('bob', false);
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: { name: 'jobs_deploy', arguments: { target: 'metered' }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const job = await fixture.started('metered');
    await client.experimental.tasks.getTask(task.taskId);
    await fixture.finish('metered', 'completed');
    // Three observations of the ended task: it is counted as ended once.
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(await count(MetricName.tasksCreated, created)).toBe(before.created + 1);
    expect(await count(MetricName.tasksEnded, completed)).toBe(before.completed + 1);

    // The creating call's SERVER span is the parent of the CLIENT span the fixture saw.
    const createRequest = fixture.requests.find(
      r => r.method === 'tools/call' && r.session === job.session,
    )!;
    const creatingClient = sdk
      .spans()
      .find(s => createRequest.traceparent?.includes(s.spanContext().spanId))!;
    const creating = creatingClient.parentSpanContext!;
    const linked = await waitFor(() => {
      const spans = sdk
        .spans()
        .filter(
          s =>
            s.kind === SpanKind.SERVER &&
            s.name.startsWith('tasks/') &&
            s.links.some(link => link.context.spanId === creating.spanId),
        );
      return spans.length === 4 ? spans : undefined;
    }, 'the task requests’ SERVER spans');
    const taskSpans = linked!;
    expect(taskSpans.map(s => s.name).sort()).toEqual([
      'tasks/get deploy',
      'tasks/get deploy',
      'tasks/get deploy',
      'tasks/result deploy',
    ]);
    for (const span of taskSpans) {
      // Each request is a trace of its own, linked to the creating one.
      expect(span.spanContext().traceId).not.toBe(creating.traceId);
      expect(span.links.map(link => link.context.traceId)).toEqual([creating.traceId]);
      expect(span.attributes).toMatchObject({
        'mcp_broker.server': 'jobs',
        'gen_ai.tool.name': 'deploy',
      });
    }

    // The operation-duration histograms name the task methods, with the task's tool.
    const served = await sdk.histogram(MetricName.serverOperationDuration);
    const sent = await sdk.histogram(MetricName.clientOperationDuration);
    for (const method of ['tasks/get', 'tasks/result']) {
      const match = {
        'mcp.method.name': method,
        'gen_ai.tool.name': 'deploy',
        'mcp_broker.server': 'jobs',
        'mcp_broker.outcome': 'succeeded',
      };
      expect(
        pointWith(served, { ...match, 'mcp_broker.era': 'legacy' }).value.count,
      ).toBeGreaterThan(0);
      expect(pointWith(sent, match).value.count).toBeGreaterThan(0);
    }

    // Beyond the bound: refused and counted, not created.
    for (const target of ['bob-1', 'bob-2']) {
      await client.request(
        { method: 'tools/call', params: { name: 'jobs_deploy', arguments: { target }, task: {} } },
        CreateTaskResultSchema,
      );
    }
    const over = await client
      .request(
        {
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'bob-3' }, task: {} },
        },
        CreateTaskResultSchema,
      )
      .catch(e => e);
    expect(String(over)).toContain('Open task limit reached');
    expect(await count(MetricName.taskLimitRefusals, refused)).toBe(before.refused + 1);
    expect(await count(MetricName.tasksCreated, created)).toBe(before.created + PER_PERSON + 1);
  });
});
