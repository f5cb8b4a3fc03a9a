/*
 * Curated endpoints added, changed and removed at runtime (spec §13, contract §6) in the real
 * backend process: the broker's config lives in a file the test's app-config pulls in with
 * `$include`, which Backstage's file config source watches, so rewriting it reloads the running
 * broker. The backend is the repository's example MCP server; the clients are the official SDK
 * clients of both eras (v1 sessions, v2 pinned to 2026-07-28 with `subscriptions/listen`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { mcpRawPost } from '../testing/mcpRawPost';
import {
  BrokerClient,
  brokerStatus,
  connectBrokerClient,
  passMarker,
  waitFor,
} from './brokerTestKit';
import { connectModernClient } from './__testUtils__/modernBrokerClient';

const endpointPath = (name: string) => `/api/mcp-broker/endpoints/${name}/mcp`;
const TOOLS_CHANGED = 'notifications/tools/list_changed';

interface ReloadStatus {
  endpoints: Array<{ name: string }>;
  clients: { sessions: number; eventStreams: number; listenStreams: number };
}

describe('curated endpoints follow config reloads (real backend process, example MCP server, SDK clients of both eras)', () => {
  let example: ExampleMcpServer;
  let backend: BackendProcess;
  let dir: string;
  let configFile: string;
  let token: string;
  /** carol (portal-admin) may read /status; alice, the clients' user, may not. */
  let statusToken: string;
  const closers: Array<() => Promise<unknown>> = [];

  const writeEndpoints = (endpoints: Record<string, unknown>) => {
    // Write then rename, as editors and ConfigMap updates do: the watcher sees one complete file.
    const temporary = `${configFile}.tmp`;
    fs.writeFileSync(
      temporary,
      JSON.stringify({
        servers: [{ name: 'example', url: example.url }],
        // Every change goes out at once (passMarker counts what arrived).
        coalesceWindow: { milliseconds: 0 },
        endpoints,
      }),
    );
    fs.renameSync(temporary, configFile);
  };
  const status = async () =>
    (await brokerStatus(backend.baseUrl, statusToken)) as unknown as ReloadStatus;
  const served = async () => (await status()).endpoints.map(endpoint => endpoint.name);

  async function legacy(endpoint?: string): Promise<BrokerClient> {
    const client = await connectBrokerClient(
      backend.baseUrl,
      token,
      endpoint === undefined ? undefined : endpointPath(endpoint),
    );
    closers.push(() => client.close());
    return client;
  }

  /** A 2026-07-28 client listening for tool list changes on `endpoint`; `heard` fills up. */
  async function listening(endpoint: string) {
    const client = await connectModernClient(
      backend.baseUrl,
      token,
      {},
      undefined,
      endpointPath(endpoint),
    );
    closers.push(() => client.close().catch(() => undefined));
    const heard: string[] = [];
    client.setNotificationHandler(TOOLS_CHANGED, () => {
      heard.push(TOOLS_CHANGED);
    });
    await client.listen({ toolsListChanged: true });
    return heard;
  }

  const ENDPOINTS = {
    ops: { servers: ['example'], tools: { include: ['example_echo'] } },
    gone: { servers: ['example'] },
  };
  /** The first test's reload: `ops` widened, `fresh` added, `gone` as it was. */
  const RELOADED = {
    ...ENDPOINTS,
    ops: { servers: ['example'], tools: { include: ['example_echo', 'example_count'] } },
    fresh: { servers: ['example'], tools: { include: ['example_confirm'] } },
  };

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'broker-endpoint-reload-'));
    configFile = path.join(dir, 'mcp-broker.json');
    writeEndpoints(ENDPOINTS);
    backend = await startBackendProcess({
      config: { mcpBroker: { $include: configFile } },
      startTimeoutMs: 240_000,
    });
    token = await backend.signIn('alice');
    statusToken = await backend.signIn('carol');
    const main = await legacy();
    await waitFor(
      async () => (await main.client.listTools()).tools.some(t => t.name === 'example_echo'),
      30_000,
      'the example server’s tools',
    );
  }, 300_000);

  afterAll(async () => {
    for (const close of closers) await close();
    await backend?.stop();
    await example?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('tells the clients of a changed endpoint, serves an added one at once, and leaves other clients alone', async () => {
    const main = await legacy();
    const ops = await legacy('ops');
    await Promise.all([main.eventStreamOpen, ops.eventStreamOpen]);
    const opsModern = await listening('ops');
    expect((await ops.client.listTools()).tools.map(t => t.name)).toEqual(['example_echo']);

    writeEndpoints(RELOADED);
    await waitFor(
      () => ops.notifications.includes(TOOLS_CHANGED) && opsModern.includes(TOOLS_CHANGED),
      30_000,
      'tools/list_changed on both of ops’ clients',
    );
    expect((await ops.client.listTools()).tools.map(t => t.name).sort()).toEqual([
      'example_count',
      'example_echo',
    ]);
    expect(await served()).toEqual(['ops', 'gone', 'fresh']);
    const fresh = await legacy('fresh');
    expect(fresh.client.getServerVersion()?.name).toBe('backstage-mcp-broker/fresh');
    expect((await fresh.client.listTools()).tools.map(t => t.name)).toEqual(['example_confirm']);
    // The main endpoint's view did not change: after a later marker, no tools/list_changed.
    await passMarker([main], () => example.announcePromptsChanged());
    expect(main.notifications).not.toContain(TOOLS_CHANGED);
  }, 90_000);

  it('ends a removed endpoint’s streams and sessions, lets its calls in flight finish, and answers 404 from then on', async () => {
    const gone = await legacy('gone');
    await gone.eventStreamOpen;
    await listening('gone');
    const before = await status();
    const cancelledBefore = example.cancelledToolCalls();
    const progress: number[] = [];
    let settled = false;
    const call = gone.client
      .callTool({ name: 'example_count', arguments: { steps: 30, delayMs: 400 } }, undefined, {
        onprogress: update => progress.push(update.progress),
        timeout: 120_000,
      })
      .finally(() => {
        settled = true;
      });
    await waitFor(() => progress.length > 0, 30_000, 'the call to be running');

    // Only `gone` goes: every other endpoint and its clients stay as they were.
    writeEndpoints({ ops: RELOADED.ops, fresh: RELOADED.fresh });
    await waitFor(async () => !(await served()).includes('gone'), 30_000, 'gone to be removed');
    // Removed while the call ran (otherwise this test would show nothing).
    expect(settled).toBe(false);
    await waitFor(
      async () => {
        const { clients } = await status();
        return (
          clients.listenStreams === before.clients.listenStreams - 1 &&
          clients.eventStreams === before.clients.eventStreams - 1
        );
      },
      30_000,
      'gone’s listen and GET streams to end',
    );
    const refused = await mcpRawPost(`${backend.baseUrl}${endpointPath('gone')}`, token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
    });
    expect(refused.status).toBe(404);
    expect((await refused.json()).error.message).toMatch(/No MCP endpoint named "gone"/);

    // The call finishes, uncancelled; then its session ends.
    const result = await call;
    expect(JSON.stringify(result.content)).toContain('counted to 30');
    expect(example.cancelledToolCalls()).toBe(cancelledBefore);
    await waitFor(
      async () => (await status()).clients.sessions === before.clients.sessions - 1,
      30_000,
      'gone’s session to end',
    );
    await expect(gone.client.listTools()).rejects.toMatchObject({ code: 404 });
  }, 120_000);

  it('refuses a reload with an invalid endpoint and keeps the running ones', async () => {
    writeEndpoints({ ops: RELOADED.ops, 'Bad Name': { servers: ['example'] } });
    await waitFor(
      () => backend.output().includes('Ignored the reloaded mcpBroker.endpoints'),
      30_000,
      'the refused reload to be logged',
    );
    expect(backend.output()).toMatch(/Invalid mcpBroker\.endpoints\.Bad Name: an endpoint name/);
    expect(await served()).toEqual(['ops', 'fresh']);
  }, 60_000);
});
