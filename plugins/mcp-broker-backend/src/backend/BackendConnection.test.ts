/*
 * BackendConnection over the node:http transport, against the real example MCP server (SDK,
 * answers with SSE) and the scripted one (JSON answers, forgets sessions on demand): the signals
 * it is given or owns carry nothing once requests are done, its event stream ends with close(),
 * and a forgotten session is re-initialized.
 */
import { getEventListeners } from 'node:events';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { startScriptedMcpServer, ScriptedMcpServer } from '../testing/scriptedMcpServer';
import type { ListsUpdate, BackendConnection } from './BackendConnection';
import { startBackendConnection } from './__testUtils__/startBackendConnection';
import { waitFor } from '../testing/waitFor';

const connect = (name: string, url: string, updates: ListsUpdate[] = []) =>
  startBackendConnection(name, url, { updates });

describe('BackendConnection over the node:http backend transport', () => {
  let example: ExampleMcpServer | undefined;
  let scripted: ScriptedMcpServer | undefined;
  let connection: BackendConnection | undefined;

  afterEach(async () => {
    await connection?.close();
    await example?.close();
    await scripted?.close();
    connection = example = scripted = undefined;
  });

  it('lists the example server, answers requests, and leaves no listener on the caller’s long-lived signal', async () => {
    example = await startExampleMcpServer({ port: 0 });
    connection = connect('example', example.url);
    await waitFor(
      () =>
        connection!.status().state === 'connected' && connection!.status().eventStream === 'open',
    );
    expect(connection.cachedLists.tools.length).toBeGreaterThan(0);

    const shutdown = new AbortController(); // like the broker's shutdown signal: lives for the process
    for (let i = 0; i < 20; i++) {
      await connection.request('tools/list', undefined, { signal: shutdown.signal });
    }
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);

    const aborted = connection.request('tools/list', undefined, { signal: shutdown.signal });
    shutdown.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
  }, 20_000);

  it('closes its event stream on close(), and re-initializes a session the backend forgot', async () => {
    scripted = await startScriptedMcpServer();
    const updates: ListsUpdate[] = [];
    connection = connect('scripted', scripted.url, updates);
    await waitFor(
      () => scripted!.openEventStreams() === 1 && connection!.status().state === 'connected',
    );
    expect(scripted.initializeCount()).toBe(1);

    scripted.forgetSessions(); // ends the stream; the next request answers 404
    await waitFor(() => scripted!.initializeCount() === 2 && scripted!.openEventStreams() === 1);
    scripted.tools.push('added');
    scripted.sendListChanged('tools');
    await waitFor(() => connection!.cachedLists.tools.some(t => t.name === 'added'));

    await connection.close();
    await waitFor(() => scripted!.openEventStreams() === 0);
    expect(connection.status().state).toBe('closed');
  }, 20_000);
});
