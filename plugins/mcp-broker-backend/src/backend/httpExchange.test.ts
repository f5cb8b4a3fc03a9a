/*
 * The HTTP plumbing under the backend transport against a real HTTP server on loopback whose
 * answers each test scripts: connection reuse, SSE and JSON bodies split at awkward places, the
 * size limit, streams left open, aborts and refused connections.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { BackendEndpoint } from './backendTransport';
import {
  deleteBackendSession,
  HttpBackendResponse,
  openBackendEventStream,
  postToBackend,
} from './httpExchange';
import { readBackendMessages } from './readBackendMessages';
import { HttpBackendTransport } from './HttpBackendTransport';
import { backendFailure } from './backendErrors';
import { waitFor } from '../testing/waitFor';
import { connectionReturned as returnedToPool } from './testing/connectionReturned';
import {
  startScriptedHttpServer,
  type ScriptedHttpHandler,
  type ScriptedHttpServer,
} from './testing/scriptedHttpServer';

describe('httpExchange (the HTTP plumbing of HttpBackendTransport)', () => {
  let scripted: ScriptedHttpServer;
  let endpoint: BackendEndpoint;
  let handler: ScriptedHttpHandler;

  beforeEach(async () => {
    scripted = await startScriptedHttpServer((req, res, body) => handler(req, res, body));
    endpoint = {
      name: 'scripted',
      url: scripted.url,
      headers: { authorization: 'Bearer broker-own' },
    };
  });

  afterEach(() => scripted.close());

  const post = (
    body = '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    signal = new AbortController().signal,
  ) => postToBackend({ endpoint, sessionId: 's-1', protocolVersion: '2025-06-18' }, body, signal);

  async function collect(response: HttpBackendResponse, maxBytes?: number) {
    const items = [];
    for await (const item of readBackendMessages(response, maxBytes)) items.push(item);
    return items;
  }

  function sse(res: http.ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
  }

  /** Waits until the connection to `url` is back in the pool, ready to be reused. */
  const connectionReturned = (url = endpoint.url) => returnedToPool(url);

  it('sends the body with the broker’s headers, the session and the protocol version', async () => {
    let seen: { headers: http.IncomingHttpHeaders; body: string; method?: string } | undefined;
    handler = (req, res, body) => {
      seen = { headers: req.headers, body, method: req.method };
      res.writeHead(202).end();
    };
    const response = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    expect(response.status).toBe(202);
    expect(response.ok).toBe(true);
    response.discard();
    expect(seen).toMatchObject({
      method: 'POST',
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      headers: {
        authorization: 'Bearer broker-own',
        'mcp-session-id': 's-1',
        'mcp-protocol-version': '2025-06-18',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': '54',
      },
    });
  });

  it('sends each header once, the target’s and the request’s over the configured ones, whatever their case', async () => {
    let seen: string[] | undefined;
    handler = (req, res) => {
      seen = req.rawHeaders;
      res.writeHead(202).end();
    };
    const target = {
      endpoint: { ...endpoint, headers: { Authorization: 'Bearer broker-own', Accept: 'x/y' } },
      headers: { AUTHORIZATION: 'Bearer per-request', 'mcp-method': 'tools/call' },
    };
    for (let i = 0; i < 2; i += 1) {
      const response = await postToBackend(target, '{}', new AbortController().signal);
      response.discard();
      const raw = seen!;
      const names = raw.filter((_, index) => index % 2 === 0).map(name => name.toLowerCase());
      expect(new Set(names).size).toBe(names.length);
      const headers = Object.fromEntries(names.map((name, index) => [name, raw[index * 2 + 1]]));
      expect(headers).toMatchObject({
        host: `127.0.0.1:${scripted.port}`,
        authorization: 'Bearer per-request',
        accept: 'application/json, text/event-stream',
        'mcp-method': 'tools/call',
        'content-length': '2',
        connection: 'keep-alive',
      });
    }
  });

  it('rejects at once with an AbortError for an aborted signal, and leaves no listener on a live one', async () => {
    let requests = 0;
    handler = (_req, res) => {
      requests += 1;
      res.writeHead(202).end();
    };
    const aborted = new AbortController();
    aborted.abort();
    const error = await post(undefined, aborted.signal).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORT_ERR' });
    expect(requests).toBe(0);

    const live = new AbortController();
    const added = jest.spyOn(live.signal, 'addEventListener');
    const removed = jest.spyOn(live.signal, 'removeEventListener');
    const response = await post(undefined, live.signal);
    response.discard();
    await waitFor(() => removed.mock.calls.length === 1, 'the abort listener removed');
    expect(added.mock.calls.length).toBe(1);
    expect(removed.mock.calls[0][1]).toBe(added.mock.calls[0][1]);
  });

  it('reads SSE messages split across chunks, including a UTF-8 character cut in two', async () => {
    const event = Buffer.from(
      'event: message\nid: e2\ndata: {"jsonrpc":"2.0","id":2,"result":{"text":"grüße €"}}\n\n',
    );
    const cut = event.indexOf(Buffer.from('€')) + 1; // inside the 3-byte euro sign
    let stream!: http.ServerResponse;
    handler = (_req, res) => {
      stream = res;
      sse(res);
      res.write(': priming comment\n\n');
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n');
      res.write(event.subarray(0, cut));
    };
    const messages = readBackendMessages(await post())[Symbol.asyncIterator]();
    expect((await messages.next()).value).toMatchObject({ type: 'message', eventId: undefined });
    // Sent only once the reader has the first message: the euro sign arrives in two reads.
    stream.end(event.subarray(cut));
    expect((await messages.next()).value).toEqual({
      type: 'message',
      eventId: 'e2',
      parsed: expect.objectContaining({
        message: { jsonrpc: '2.0', id: 2, result: { text: 'grüße €' } },
      }),
    });
    expect((await messages.next()).done).toBe(true);
  });

  it('reads a JSON body as one message, and a line that is not JSON-RPC as malformed', async () => {
    handler = (_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body.includes('ping') ? '{"jsonrpc":"2.0","id":1,"result":{}}' : 'not json');
    };
    expect(await collect(await post())).toEqual([
      {
        type: 'message',
        eventId: undefined,
        parsed: expect.objectContaining({ message: { jsonrpc: '2.0', id: 1, result: {} } }),
      },
    ]);
    expect(await collect(await post('{"jsonrpc":"2.0","id":2,"method":"other"}'))).toEqual([
      { type: 'malformed', text: 'not json' },
    ]);
  });

  it('keeps one connection for sequential calls, also when the reader stops at its answer before the stream ends', async () => {
    let stream!: http.ServerResponse;
    handler = (_req, res) => {
      stream = res;
      sse(res);
      res.write('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    };
    for (let i = 0; i < 5; i++) {
      const response = await post();
      for await (const item of readBackendMessages(response)) {
        expect(item.type).toBe('message');
        break; // the caller has its answer
      }
      stream.end(); // the stream ends after the caller has its answer
      await connectionReturned();
    }
    expect(scripted.connections()).toBe(1);
  });

  it('gives the connection of a discarded empty answer (202) back for the next request', async () => {
    handler = (_req, res) => res.writeHead(202).end();
    for (let i = 0; i < 3; i++) {
      (await post('{"jsonrpc":"2.0","method":"notifications/initialized"}')).discard();
      await connectionReturned();
    }
    await deleteBackendSession({ endpoint, sessionId: 's-1' }, new AbortController().signal);
    await connectionReturned();
    await post();
    expect(scripted.connections()).toBe(1);
  });

  it('opens an event stream with GET and the session headers, and reads it until closed', async () => {
    let seen: http.IncomingMessage | undefined;
    const closed = new Promise<void>(resolve => {
      handler = (req, res) => {
        seen = req;
        sse(res);
        res.write('data: one\n\n');
        res.on('close', () => resolve());
      };
    });
    const response = await openBackendEventStream(
      { endpoint, sessionId: 's-1', protocolVersion: '2025-06-18' },
      new AbortController().signal,
    );
    expect(response.isEventStream).toBe(true);
    expect(seen?.method).toBe('GET');
    expect(seen?.headers).toMatchObject({
      accept: 'text/event-stream',
      authorization: 'Bearer broker-own',
      'mcp-session-id': 's-1',
      'mcp-protocol-version': '2025-06-18',
    });
    for await (const chunk of response.body) {
      expect(chunk.toString()).toBe('data: one\n\n');
      break;
    }
    let onCloseCalled = false;
    response.onClose(() => (onCloseCalled = true));
    response.close();
    await closed;
    expect(onCloseCalled).toBe(true);
  });

  it('reads an error body as text, cut at the limit, and keeps the connection', async () => {
    handler = (_req, res) =>
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`session ${'€'.repeat(100)}`);
    const first = await post();
    expect(first.status).toBe(400);
    expect(await first.text(12)).toBe('session €'); // 8 + 3 bytes; the next '€' is cut, so dropped
    await connectionReturned();
    expect((await (await post()).text()).length).toBe(108);
    expect(scripted.connections()).toBe(1);
  });

  it.each([
    {
      replayable: true,
      outcome: 'sends it again on a new connection',
      expected: { status: 202 },
      sockets: 2,
    },
    {
      replayable: false,
      outcome: 'fails it (a tools/call is never sent twice)',
      expected: { code: 'ECONNRESET' },
      sockets: 1,
    },
  ])(
    'when a reused connection turns out closed by the backend, replayable=$replayable $outcome',
    async ({ replayable, expected, sockets }) => {
      // A raw TCP server that answers the first request of each connection and closes the
      // connection on the second without answering: what a backend's keep-alive timeout does
      // when it fires just as the broker reuses the connection.
      const rawSockets: net.Socket[] = [];
      const raw = net.createServer(socket => {
        rawSockets.push(socket);
        let requests = 0;
        socket.on('data', chunk => {
          if (!chunk.toString('latin1').includes('\r\n\r\n')) return; // headers and body come in one chunk here
          requests += 1;
          if (requests === 1)
            socket.write(
              'HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n',
            );
          else socket.destroy();
        });
      });
      await new Promise<void>(resolve => raw.listen(0, '127.0.0.1', resolve));
      try {
        const rawEndpoint = {
          ...endpoint,
          url: `http://127.0.0.1:${(raw.address() as AddressInfo).port}/mcp`,
        };
        const send = () =>
          postToBackend({ endpoint: rawEndpoint }, '{}', new AbortController().signal, {
            replayable,
          });
        (await send()).discard();
        await connectionReturned(rawEndpoint.url);
        const second = await send().then(
          (response: HttpBackendResponse) => {
            response.discard();
            return { status: response.status };
          },
          (error: { code?: unknown }) => ({ code: error.code }),
        );
        expect(second).toEqual(expected);
        expect(rawSockets).toHaveLength(sockets);
      } finally {
        rawSockets.forEach(socket => socket.destroy());
        await new Promise(resolve => raw.close(resolve));
      }
    },
  );

  it('closes an idle kept-alive connection 1 s before the backend’s Keep-Alive hint says the backend will', async () => {
    scripted.server.keepAliveTimeout = 2_000; // Node then answers with `Keep-Alive: timeout=2`
    // Which side closed: the broker's close arrives as an 'end' (FIN) before 'close'; the
    // backend's own keep-alive timeout destroys the socket without one.
    let endedByBroker = false;
    const serverSideClosed = new Promise<number>(resolve => {
      scripted.server.once('connection', socket => {
        socket.once('end', () => (endedByBroker = true));
        socket.once('close', () => resolve(Date.now()));
      });
    });
    handler = (_req, res) => res.writeHead(202).end();
    const response = await post();
    expect(response.header('keep-alive')).toBe('timeout=2');
    response.discard();
    const idleSince = Date.now();
    const closedAfter = (await serverSideClosed) - idleSince;
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(endedByBroker).toBe(true); // the broker closed it, not the backend (2 s)
  });

  it('closes a discarded event stream that the backend never ends, after the grace period', async () => {
    const closed = new Promise<void>(resolve => {
      handler = (_req, res) => {
        sse(res);
        res.write(': open\n\n');
        res.on('close', () => resolve());
      };
    });
    const response = await post();
    response.discard(50);
    await closed; // would time out the test if the connection stayed open
    expect(response.ok).toBe(true);
  });

  it('refuses a message larger than the limit and closes the connection', async () => {
    const closed = new Promise<void>(resolve => {
      handler = (_req, res) => {
        sse(res);
        res.write(`data: {"jsonrpc":"2.0","id":1,"result":{"big":"${'x'.repeat(3000)}`);
        res.on('close', () => resolve());
      };
    });
    await expect(collect(await post(), 1024)).rejects.toMatchObject({
      name: 'BackendTransportError',
      failure: 'too-large',
    });
    await closed;
  });

  it('breaks the body’s iteration when the signal aborts mid-stream', async () => {
    handler = (_req, res) => {
      sse(res);
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n');
    };
    const controller = new AbortController();
    const response = await post(undefined, controller.signal);
    const messages = readBackendMessages(response)[Symbol.asyncIterator]();
    expect((await messages.next()).done).toBe(false); // reading, and the stream stays open
    controller.abort();
    await expect(messages.next()).rejects.toThrow();
  });

  it('rejects with the socket error’s code when nothing listens, which the error mapping names', async () => {
    await scripted.close();
    const refused = { endpoint };
    const error: unknown = await postToBackend(refused, '{}', new AbortController().signal).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    const failure = await HttpBackendTransport.shared
      .send(refused, { text: '{}' }, { signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ failure: 'unreachable', code: 'ECONNREFUSED' });
    expect(backendFailure('scripted', failure, false).message).toBe(
      'MCP server "scripted" is unreachable (ECONNREFUSED)',
    );
  });

  it('reports an SSE event of another type on an event stream (its reader counts it as dropped)', async () => {
    handler = (_req, res) => {
      sse(res);
      res.end(
        'event: endpoint\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n' +
          'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
      );
    };
    const items = [];
    for await (const item of readBackendMessages(await post(), undefined, 'report'))
      items.push(item);
    expect(items).toEqual([
      expect.objectContaining({ type: 'malformed', reason: 'unexpected SSE event type' }),
      expect.objectContaining({ type: 'message' }),
    ]);
    // A POST's reader skips it (it is no JSON-RPC traffic).
    expect((await collect(await post())).map(item => item.type)).toEqual(['message']);
  });
});
