/*
 * The 2026-07-28 wire of the broker's own connection against a scripted modern backend (a test
 * double: the SDK v2 server cannot be made to skip the acknowledgement or mistag an event; the
 * well-behaved path against the real SDK server is BackendConnection.eras.test.ts): headers and
 * `_meta` of every request, the acknowledgement check, events of another subscription or of an
 * unacknowledged kind dropped, a stream the backend closes with its final result reopened, and
 * streams that end right after their acknowledgement counted as failures until one stays up.
 * Then, through the whole plugin (startTestBackend): the backend's list `ttlMs` in the broker's
 * lists for 2026-07-28 clients.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import request from 'supertest';
import { mcpBrokerPlugin } from '../plugin';
import { waitFor } from '../testing/waitFor';
import { BackendConnection } from './BackendConnection';

interface Recorded {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

/** A scripted modern backend: discover, tools/list, and listen streams driven by the test. */
async function startScriptedModernBackend(options: { acknowledge: boolean }) {
  const requests: Recorded[] = [];
  const listens: Array<{ id: unknown; res: http.ServerResponse }> = [];
  let tools = ['first'];
  let endListensAfterAcknowledging = false;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', chunk => {
      raw += chunk;
    });
    req.on('end', () => {
      const body = JSON.parse(raw);
      requests.push({ method: body.method, headers: req.headers, body });
      const answer = (result: Record<string, unknown>) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
      };
      if (body.method === 'server/discover') {
        answer({
          supportedVersions: ['2026-07-28'],
          capabilities: {
            tools: { listChanged: true },
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
          ttlMs: 0,
          cacheScope: 'public',
          resultType: 'complete',
        });
      } else if (body.method === 'tools/list') {
        answer({
          tools: tools.map(name => ({ name, inputSchema: { type: 'object' } })),
          ttlMs: 30_000,
          cacheScope: 'public',
          resultType: 'complete',
        });
      } else if (body.method === 'subscriptions/listen') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        listens.push({ id: body.id, res });
        if (options.acknowledge) {
          send(res, {
            jsonrpc: '2.0',
            method: 'notifications/subscriptions/acknowledged',
            params: {
              _meta: { 'io.modelcontextprotocol/subscriptionId': body.id },
              notifications: { toolsListChanged: true },
            },
          });
          if (endListensAfterAcknowledging) res.end();
        } else {
          send(res, listChanged('tools', body.id));
        }
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            error: { code: -32601, message: 'Method not found' },
          }),
        );
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    requests,
    listens,
    setTools(names: string[]) {
      tools = names;
    },
    /** Whether listen streams end right after their acknowledgement (without a result). */
    endListensAfterAcknowledging(value: boolean) {
      endListensAfterAcknowledging = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    },
  };
}

function send(res: http.ServerResponse, message: unknown) {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

function listChanged(kind: string, subscriptionId: unknown) {
  return {
    jsonrpc: '2.0',
    method: `notifications/${kind}/list_changed`,
    params: { _meta: { 'io.modelcontextprotocol/subscriptionId': subscriptionId } },
  };
}

function connect(url: string) {
  const connection = new BackendConnection({
    backend: {
      name: 'scripted-modern',
      url,
      toolPrefix: 'm_',
      headers: { Authorization: 'Bearer broker-own' },
    },
    logger: mockServices.logger.mock(),
    requestTimeoutMs: 1000,
    pollIntervalMs: 60_000,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    onListsUpdated: () => {},
  });
  connection.start();
  return connection;
}

describe('ModernBackendClient through BackendConnection (scripted 2026-07-28 backend)', () => {
  let backend: Awaited<ReturnType<typeof startScriptedModernBackend>> | undefined;
  let connection: BackendConnection | undefined;

  afterEach(async () => {
    await connection?.close();
    await backend?.close();
    connection = backend = undefined;
  });

  it('sends the per-request _meta, the mirroring headers and the broker’s credentials', async () => {
    backend = await startScriptedModernBackend({ acknowledge: true });
    connection = connect(backend.url);
    await waitFor(() => connection!.status().eventStream === 'open', 'the listen stream');

    const list = backend.requests.find(r => r.method === 'tools/list')!;
    expect(list.headers).toMatchObject({
      authorization: 'Bearer broker-own',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    });
    expect(list.headers['mcp-session-id']).toBeUndefined();
    expect(list.body.params._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      // Everything the broker relays, MCP Apps included (tasks-and-apps.md §3.4).
      'io.modelcontextprotocol/clientCapabilities': {
        elicitation: {},
        sampling: {},
        extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
      },
      'io.modelcontextprotocol/clientInfo': { name: 'backstage-mcp-broker', version: '0.1.0' },
    });
    expect(backend.requests[0].method).toBe('server/discover');
    expect(connection.listTtls).toEqual({ tools: 30_000 });
    // The tasks extension is not relayed.
    expect(connection.capabilities).toEqual({ tools: { listChanged: true } });

    await connection.request('tools/call', { name: 'first', arguments: {} }).catch(() => {});
    const call = backend.requests.find(r => r.method === 'tools/call')!;
    expect(call.headers).toMatchObject({ 'mcp-method': 'tools/call', 'mcp-name': 'first' });
  });

  it('drops events of another subscription or an unacknowledged kind, and refreshes on a valid one', async () => {
    backend = await startScriptedModernBackend({ acknowledge: true });
    connection = connect(backend.url);
    await waitFor(() => connection!.status().eventStream === 'open', 'the listen stream');
    const { id, res } = backend.listens[0];

    backend.setTools(['first', 'second']);
    send(res, listChanged('tools', 'someone-else'));
    send(res, listChanged('prompts', id));
    await waitFor(() => connection!.status().droppedEvents === 2, 'two dropped events');
    expect(connection.cachedLists.tools.map(t => t.name)).toEqual(['first']);

    send(res, listChanged('tools', id));
    await waitFor(
      () => connection!.cachedLists.tools.length === 2,
      'the refresh after a valid event',
    );
  });

  it('reopens a listen stream the backend ended with its final result', async () => {
    backend = await startScriptedModernBackend({ acknowledge: true });
    connection = connect(backend.url);
    await waitFor(() => connection!.status().eventStream === 'open', 'the listen stream');
    const { id, res } = backend.listens[0];
    res.end(
      `event: message\ndata: ${JSON.stringify({
        jsonrpc: '2.0',
        id,
        result: { resultType: 'complete' },
      })}\n\n`,
    );
    await waitFor(() => backend!.listens.length === 2, 'a second listen stream');
    await waitFor(() => connection!.status().eventStream === 'open', 'the stream open again');
    expect(backend.requests.filter(r => r.method === 'server/discover')).toHaveLength(2);
  });

  // connect() backs off from 50 ms to 200 ms: the stable period is 200 ms.
  it('counts a listen stream that ends right after its acknowledgement as a failure until one stays up', async () => {
    backend = await startScriptedModernBackend({ acknowledge: true });
    backend.endListensAfterAcknowledging(true);
    connection = connect(backend.url);
    await waitFor(() => connection!.status().consecutiveFailures >= 3, 'three dropped streams');
    expect(backend.listens.length).toBeGreaterThanOrEqual(3);
    expect(connection.status().lastError).toMatch(/event stream closed/);

    backend.endListensAfterAcknowledging(false);
    const opened = backend.listens.length;
    await waitFor(
      () => backend!.listens.length > opened && connection!.status().eventStream === 'open',
      'a listen stream that stays open',
    );
    await waitFor(() => connection!.status().consecutiveFailures === 0, 'the stable period');
    expect(connection.status()).toMatchObject({ state: 'connected', eventStream: 'open' });
  });

  it('refuses a listen stream whose first message is not the acknowledgement', async () => {
    backend = await startScriptedModernBackend({ acknowledge: false });
    connection = connect(backend.url);
    await waitFor(() => connection!.status().consecutiveFailures >= 1, 'a failed attempt');
    expect(connection.status().lastError).toMatch(
      /did not acknowledge subscriptions\/listen with its first message/,
    );
    expect(connection.status().eventStream).not.toBe('open');
  });
});

describe('a 2026-07-28 backend’s list ttlMs in the broker’s lists (startTestBackend, scripted backend)', () => {
  let backend: Awaited<ReturnType<typeof startScriptedModernBackend>>;
  let testBackend: Awaited<ReturnType<typeof startTestBackend>>;
  let broker: Awaited<ReturnType<typeof startTestBackend>>['server'];

  beforeAll(async () => {
    backend = await startScriptedModernBackend({ acknowledge: true });
    testBackend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'scripted-modern', url: backend.url }],
              listTtl: { minutes: 2 },
            },
          },
        }),
      ],
    });
    broker = testBackend.server;
    await waitFor(async () => {
      const status = await request(broker).get('/api/mcp-broker/status');
      return status.body.backends?.[0]?.era === 'modern';
    }, 'the backend detected as 2026-07-28');
  });

  afterAll(async () => {
    await testBackend?.stop();
    await backend?.close();
  });

  const post = (id: number, method: string) =>
    request(broker)
      .post('/api/mcp-broker/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '2026-07-28')
      .set('Mcp-Method', method)
      .send(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      );

  it('gives the backend’s smaller tools/list ttlMs, and the configured default where it gave none', async () => {
    const tools = await post(1, 'tools/list');
    expect(tools.status).toBe(200);
    expect(tools.body.result).toMatchObject({
      tools: [expect.objectContaining({ name: 'scripted-modern_first' })],
      ttlMs: 30_000,
    });
    // The backend lists no prompts (no capability): no hint, so the broker's listTtl.
    expect((await post(2, 'prompts/list')).body.result).toMatchObject({ ttlMs: 120_000 });
    // server/discover covers every list: the smallest hint of any.
    expect((await post(3, 'server/discover')).body.result).toMatchObject({ ttlMs: 30_000 });
  });
});
