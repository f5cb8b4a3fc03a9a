/*
 * BackendConnection over the node:http transport, against the real example MCP server (SDK,
 * answers with SSE) and the scripted one (JSON answers, forgets sessions on demand): the signals
 * it is given or owns carry nothing once requests are done, its event stream ends with close(),
 * a forgotten session is re-initialized, and the backoff starts over only after a stable
 * connection.
 */
import { getEventListeners } from 'node:events';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { startScriptedMcpServer, ScriptedMcpServer } from '../testing/scriptedMcpServer';
import type { BackendConnection } from './BackendConnection';
import type { ListsUpdate } from './backendConnectionTypes';
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

  // startBackendConnection backs off from 50 ms up to 200 ms, so the stable period (maxDelay up
  // to 10 s) is 200 ms; each jittered delay lies between half its nominal value and all of it.
  it('backs off further while the event stream drops at once, and starts over after a stable connection', async () => {
    scripted = await startScriptedMcpServer({ endEventStreamsAtOnce: true });
    const seen: Array<{ state: string; failures: number; delayMs?: number }> = [];
    connection = startBackendConnection('flaky', scripted.url, {
      onStateChanged: (_name, state) => {
        const status = connection!.status();
        const retryAt = status.nextRetryAt;
        seen.push({
          state,
          failures: status.consecutiveFailures,
          delayMs: retryAt === undefined ? undefined : Date.parse(retryAt) - Date.now(),
        });
      },
    });
    const backingOff = () => seen.filter(s => s.state === 'backing-off');
    await waitFor(() => backingOff().length >= 5, 'five dropped event streams');
    // Every attempt got through the lists and the stream opened, yet none counted as healthy.
    const drops = backingOff();
    expect(drops.map(s => s.failures)).toEqual(drops.map((_, i) => i + 1));
    expect(drops[0].delayMs).toBeLessThanOrEqual(50);
    expect(drops[3].delayMs).toBeGreaterThanOrEqual(99); // nominal 200 ms
    expect(scripted.eventStreamsOpened()).toBeGreaterThanOrEqual(5);
    expect(scripted.initializeCount()).toBe(1); // the session itself stayed valid

    scripted.endEventStreamsAtOnce = false;
    await waitFor(() => scripted!.openEventStreams() === 1, 'an event stream that stays open');
    // Connected again, but not yet healthy: the failures still count until the stable period.
    const connected = seen.filter(s => s.state === 'connected').at(-1)!;
    expect(connected.failures).toBeGreaterThanOrEqual(5);
    await waitFor(() => connection!.status().consecutiveFailures === 0, 'the stable period');
    expect(connection.status()).toMatchObject({ state: 'connected', eventStream: 'open' });

    const before = backingOff().length;
    scripted.endEventStreams();
    await waitFor(() => backingOff().length > before, 'the next drop');
    expect(backingOff()[before].failures).toBe(1);
    expect(backingOff()[before].delayMs).toBeLessThanOrEqual(50);
  }, 20_000);

  // Left open by issue #32: a GET that never answers used to leave the backend `connected`
  // with its event stream down for the whole request timeout (5 s here).
  it('backs off with a clear lastError when the event stream does not open in time, and connects once it does', async () => {
    scripted = await startScriptedMcpServer({ holdEventStreams: true });
    const states: string[] = [];
    connection = startBackendConnection('silent', scripted.url, {
      eventStreamOpenMs: 200,
      onStateChanged: (_name, state) => states.push(state),
    });
    const missed = 'backend silent: the event stream did not open within 200 ms';
    await waitFor(
      () => connection!.status().consecutiveFailures >= 2,
      'two attempts whose stream did not open',
    );
    expect(connection.status().lastError).toBe(missed);
    expect(states).toContain('backing-off');
    // While a retry waits for the headers, the stream is `opening` and the last error stays.
    await waitFor(() => connection!.status().eventStream === 'opening', 'a retry of the stream');
    expect(connection.status()).toMatchObject({ state: 'connected', lastError: missed });
    expect(scripted.eventStreamsHeld()).toBeGreaterThanOrEqual(2);
    expect(scripted.initializeCount()).toBe(1); // the session stays; only the stream is retried

    scripted.holdEventStreams = false;
    await waitFor(
      () =>
        connection!.status().state === 'connected' && connection!.status().eventStream === 'open',
      'the stream open once the backend answers',
    );
  }, 20_000);
});
