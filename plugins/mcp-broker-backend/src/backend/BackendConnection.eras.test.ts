/*
 * Era detection and the modern (2026-07-28) half of BackendConnection, against real servers of
 * both SDK generations: the repository's example servers (SDK 1.x with sessions; SDK v2 2.4.0,
 * stateless, `createMcpHandler`), in process or as child processes on a handed-over port (a
 * backend that changes era across a restart at the same URL), or behind a front that answers
 * `server/discover` (and `initialize`) with HTTP 500, as some 2025-11-25 servers do.
 */
import {
  ExampleMcpServer,
  ModernExampleMcpServer,
  startExampleMcpServer,
  startModernExampleMcpServer,
} from '@internal/example-mcp-server';
import { startUnreachableServer } from '@internal/test-mcp-backends';
import type { ChildServer, UnreachableServer } from '@internal/test-mcp-backends';
import { startExampleServerProcess } from './__testUtils__/exampleServerProcess';
import { waitFor } from '../testing/waitFor';
import type { BackendConnection } from './BackendConnection';
import type { ListsUpdate } from './backendConnectionTypes';
import { startBackendConnection } from './__testUtils__/startBackendConnection';
import { BackendRpcError } from './backendErrors';
import {
  FailingMethodsFront,
  HTTP_500_ANSWER,
  startFailingMethodsFront,
} from './__testUtils__/failingMethodsFront';

const connect = (url: string, updates: ListsUpdate[] = [], headers: Record<string, string> = {}) =>
  startBackendConnection('backend', url, { updates, headers });

/** The fixed tools of the modern example server, in its order. */
const MODERN_EXAMPLE_TOOLS = ['echo', 'count', 'add_tool', 'confirm', 'deploy', 'regional_echo'];
const toolNames = (connection: BackendConnection) =>
  connection.cachedLists.tools.map(tool => tool.name);

describe('BackendConnection: the era of each backend', () => {
  let legacy: ExampleMcpServer | undefined;
  let modern: ModernExampleMcpServer | undefined;
  let processes: ChildServer[] = [];
  let front: FailingMethodsFront | undefined;
  let unreachable: UnreachableServer | undefined;
  let connection: BackendConnection | undefined;

  afterEach(async () => {
    await connection?.close();
    await front?.close();
    await unreachable?.close();
    await legacy?.close();
    await modern?.close();
    for (const child of processes) await child.kill();
    connection = legacy = modern = front = unreachable = undefined;
    processes = [];
  });

  it('speaks 2026-07-28 to an SDK v2 backend: stateless lists, requests, and listen events', async () => {
    modern = await startModernExampleMcpServer({ port: 0 });
    const updates: ListsUpdate[] = [];
    connection = connect(modern.url, updates);
    await waitFor(
      () =>
        connection!.status().state === 'connected' && connection!.status().eventStream === 'open',
      'the modern connection and its listen stream',
    );
    const status = connection.status();
    expect(status).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28' });
    expect(Date.parse(status.eraDetectedAt!)).not.toBeNaN();
    expect(toolNames(connection)).toEqual(MODERN_EXAMPLE_TOOLS);
    expect(connection.cachedLists.prompts.map(p => p.name)).toEqual(['greeting', 'ask_greeting']);
    expect(connection.capabilities).toMatchObject({ tools: { listChanged: true } });
    // The SDK's default caching hint (ttlMs 0) is kept per list.
    expect(connection.listTtls).toMatchObject({ tools: 0, prompts: 0, resources: 0 });
    expect(modern.listenStreams()).toBe(1);

    // Requests are stateless; the SDK checks that Mcp-Name mirrors the body (-32020 otherwise).
    const prompt = await connection.request('prompts/get', {
      name: 'greeting',
      arguments: { name: 'Ada' },
    });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Hello, Ada!' } },
    ]);
    const read = await connection.request('resources/read', { uri: 'example://modern/readme' });
    expect(read.contents).toEqual([expect.objectContaining({ uri: 'example://modern/readme' })]);
    // A name that is not plain ASCII goes out Base64-encoded in Mcp-Name: the backend answers
    // about the prompt (unknown), not about a header mismatch.
    const unknown = await connection
      .request('prompts/get', { name: 'grüße', arguments: {} })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(BackendRpcError);
    expect((unknown as BackendRpcError).error.code).not.toBe(-32020);

    // A change on the backend arrives over subscriptions/listen and refreshes the tools.
    modern.addTool('fresh');
    await waitFor(() => toolNames(connection!).includes('fresh'), 'the refreshed tool list');
    expect(updates.at(-1)?.eventKinds).toEqual(new Set(['tools']));
    expect(connection.status().lastEventAt).toBeDefined();
    expect(connection.status().droppedEvents).toBe(0);

    await connection.close();
    await waitFor(() => modern!.listenStreams() === 0, 'the listen stream to close');
  }, 30_000);

  it('falls back to the legacy handshake with an SDK 1.x backend', async () => {
    legacy = await startExampleMcpServer({ port: 0 });
    connection = connect(legacy.url);
    await waitFor(
      () =>
        connection!.status().state === 'connected' && connection!.status().eventStream === 'open',
      'the legacy connection and its GET stream',
    );
    expect(connection.status()).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25' });
    expect(legacy.sessionCount()).toBe(1);
    expect(toolNames(connection)).toContain('confirm');
    expect(connection.listTtls).toEqual({});
  }, 30_000);

  it.each([
    ['HTTP 500', HTTP_500_ANSWER],
    ['an HTML page', { status: 200, contentType: 'text/html', body: '<html>Welcome</html>' }],
  ])(
    'falls back to the legacy handshake when an SDK 1.x backend answers server/discover with %s',
    async (_what, answer) => {
      legacy = await startExampleMcpServer({ port: 0 });
      front = await startFailingMethodsFront(legacy.url, ['server/discover'], answer);
      const states: string[] = [];
      connection = startBackendConnection('backend', front.url, {
        onStateChanged: (_name, state) => states.push(state),
      });
      await waitFor(
        () =>
          connection!.status().state === 'connected' && connection!.status().eventStream === 'open',
        'the legacy connection and its GET stream',
      );
      expect(front.failed()).toEqual(['server/discover']);
      expect(states).not.toContain('backing-off'); // connected at the first attempt
      expect(connection.status()).toMatchObject({
        era: 'legacy',
        protocolVersion: '2025-11-25',
        consecutiveFailures: 0,
      });
      expect(connection.status().lastError).toBeUndefined();
      expect(legacy.sessionCount()).toBe(1);
      expect(toolNames(connection)).toContain('echo');
      const call = await connection.request('tools/call', {
        name: 'echo',
        arguments: { message: 'through the fallback' },
      });
      expect(call.content).toEqual([{ type: 'text', text: 'through the fallback' }]);
    },
    30_000,
  );

  it('backs off with both answers when server/discover and the legacy initialize both answer HTTP 500', async () => {
    modern = await startModernExampleMcpServer({ port: 0 });
    front = await startFailingMethodsFront(modern.url, ['server/discover', 'initialize']);
    connection = connect(front.url);
    await waitFor(() => connection!.status().consecutiveFailures >= 2, 'two failed attempts');
    const status = connection.status();
    expect(status.state).toBe('backing-off');
    expect(status.lastError).toBe(
      'backend backend: era detection failed: server/discover answered HTTP 500; ' +
        'legacy initialize: answered HTTP 500',
    );
    expect(status.era).toBeUndefined();
    expect(status.nextRetryAt).toBeDefined();
    // Each attempt: one server/discover, then one initialize; nothing else reached the backend.
    const failed = front.failed();
    expect(failed.slice(0, 4)).toEqual([
      'server/discover',
      'initialize',
      'server/discover',
      'initialize',
    ]);
  }, 30_000);

  it('sends no legacy handshake after a network error: one connection per attempt', async () => {
    unreachable = await startUnreachableServer();
    const attempts: Array<{ failures: number; connections: number }> = [];
    connection = startBackendConnection('backend', unreachable.url, {
      onStateChanged: (_name, state) => {
        if (state !== 'backing-off') return;
        attempts.push({
          failures: connection!.status().consecutiveFailures,
          connections: unreachable!.connections(),
        });
      },
    });
    await waitFor(() => attempts.length >= 3, 'three failed attempts');
    expect(attempts.slice(0, 3)).toEqual([
      { failures: 1, connections: 1 },
      { failures: 2, connections: 2 },
      { failures: 3, connections: 3 },
    ]);
    expect(connection.status().lastError).not.toMatch(/initialize/);
  }, 30_000);

  it('takes 401 as a credentials problem, not as an era', async () => {
    modern = await startModernExampleMcpServer({ port: 0, bearerToken: 'right' });
    connection = connect(modern.url, [], { Authorization: 'Bearer wrong' });
    await waitFor(() => connection!.status().consecutiveFailures >= 2, 'two rejected attempts');
    const status = connection.status();
    expect(status.state).toBe('failed');
    expect(status.lastError).toMatch(/rejected the broker's credentials \(HTTP 401\)/);
    expect(status.era).toBeUndefined();
    expect(status.nextRetryAt).toBeDefined();
  }, 30_000);

  it('detects the era again when a backend comes back in another era at the same URL', async () => {
    const first = await startExampleServerProcess('legacy');
    processes.push(first);
    const updates: ListsUpdate[] = [];
    connection = connect(first.url, updates);
    await waitFor(
      () => connection!.status().state === 'connected' && connection!.status().era === 'legacy',
      'the legacy era',
    );
    const legacyDetectedAt = connection.status().eraDetectedAt!;
    expect(toolNames(connection)).toContain('confirm');

    await first.kill();
    await waitFor(() => connection!.status().state !== 'connected', 'the drop');
    const second = await startExampleServerProcess('modern', first.port);
    processes.push(second);
    await waitFor(
      () => connection!.status().state === 'connected' && connection!.status().era === 'modern',
      'the modern era',
      20_000,
    );
    expect(connection.status().eraDetectedAt! > legacyDetectedAt).toBe(true);
    expect(toolNames(connection)).toEqual(MODERN_EXAMPLE_TOOLS);
    expect(updates.at(-1)?.changedKinds.has('tools')).toBe(true);
    await waitFor(() => connection!.status().eventStream === 'open', 'the listen stream');

    await second.kill();
    await waitFor(() => connection!.status().state !== 'connected', 'the second drop');
    const third = await startExampleServerProcess('legacy', first.port);
    processes.push(third);
    await waitFor(
      () => connection!.status().state === 'connected' && connection!.status().era === 'legacy',
      'the legacy era again',
      20_000,
    );
    expect(toolNames(connection)).toContain('confirm');
  }, 90_000);
});
