/*
 * LegacyChannel (2025-11-25 over the HTTP transport) against a real HTTP server on loopback whose
 * answers each test scripts: JSON and SSE answers on one kept-alive connection, every error
 * mapping (lost session, rejected credentials, 405, refused connection, timeouts, aborts), and
 * the GET event stream's life, which the header timeout must not limit.
 */
import http from 'node:http';
import { getEventListeners } from 'node:events';
import type { JsonRpcMessage } from '../protocol/jsonRpc';
import { connectionReturned } from './testing/connectionReturned';
import { BackendError } from './backendErrors';
import type { BackendEndpoint } from './backendTransport';
import { HttpBackendTransport } from './HttpBackendTransport';
import { LegacyChannel } from './LegacyChannel';
import { waitFor } from '../testing/waitFor';
import {
  startScriptedHttpServer,
  type ScriptedHttpHandler,
  type ScriptedHttpServer,
} from './testing/scriptedHttpServer';

const SESSION = { id: 'upstream-session-1', protocolVersion: '2025-06-18' };
const ping = (id = 1) => ({ jsonrpc: '2.0' as const, id, method: 'tools/list' });

describe('LegacyChannel over the HTTP backend transport', () => {
  let scripted: ScriptedHttpServer;
  let backend: BackendEndpoint;
  let handler: ScriptedHttpHandler;

  beforeEach(async () => {
    scripted = await startScriptedHttpServer((req, res, body) => handler(req, res, body));
    backend = {
      name: 'scripted',
      url: scripted.url,
      headers: { authorization: 'Bearer broker-own' },
    };
  });

  afterEach(() => scripted.close());

  const client = (timeoutMs = 2000, target = backend) =>
    new LegacyChannel(target, HttpBackendTransport.shared, timeoutMs);
  const json = (
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) =>
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body));
  const errorOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
  /** A failure as `/status` shows it, with what programs read of it. */
  const failureOf = async (promise: Promise<unknown>) => {
    const error = await errorOf(promise);
    if (!(error instanceof BackendError)) return error;
    return { statusText: error.statusText, reason: error.reason, httpStatus: error.httpStatus };
  };

  it('reads JSON and SSE answers, hands other stream messages over, and keeps one connection', async () => {
    let n = 0;
    let stream: http.ServerResponse | undefined;
    handler = (_req, res, body) => {
      const { id } = JSON.parse(body);
      n += 1;
      if (n % 2 === 1) {
        json(
          res,
          200,
          { jsonrpc: '2.0', id, result: { tools: [] } },
          { 'mcp-session-id': 'assigned' },
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n\n');
      res.write('data: not json\n\n');
      res.write(`data: {"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"echo"}]}}\n\n`);
      stream = res; // ended by the test once the client has the answer
    };
    const http1 = client();
    const first = await http1.request(ping(1), SESSION);
    expect(first).toEqual({
      response: { jsonrpc: '2.0', id: 1, result: { tools: [] } },
      sessionId: 'assigned',
    });

    await connectionReturned(backend.url);
    const serverMessages: JsonRpcMessage[] = [];
    const second = await http1.request(ping(2), SESSION, {
      onServerMessage: m => serverMessages.push(m),
    });
    expect(second.response).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { tools: [{ name: 'echo' }] },
    });
    expect(serverMessages).toEqual([{ jsonrpc: '2.0', id: 'srv-1', method: 'ping' }]);

    stream!.end(); // the stream ends after the answer, then the connection is reused
    await connectionReturned(backend.url);
    await http1.request(ping(3), SESSION);
    expect(scripted.connections()).toBe(1);
    expect(scripted.requests[0].headers).toMatchObject({
      authorization: 'Bearer broker-own',
      'mcp-session-id': 'upstream-session-1',
      'mcp-protocol-version': '2025-06-18',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    });
  });

  it('names a lost session (404, or 400 that says so), rejected credentials and other statuses', async () => {
    const answers: Array<[number, string]> = [
      [404, 'Not Found'],
      [400, '{"error":{"message":"Bad Request: No valid session ID provided"}}'],
      [401, 'no'],
      [403, 'no'],
      [400, 'bad request'],
      [500, 'oops'],
    ];
    handler = (_req, res) => {
      const [status, text] = answers.shift()!;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
    };
    const c = client();
    // Each refusal's body is read, so its connection goes back to the pool for the next one.
    const refusalOf = async (promise: Promise<unknown>) => {
      const failure = await failureOf(promise);
      await connectionReturned(backend.url);
      return failure;
    };
    expect(await refusalOf(c.request(ping(), SESSION))).toEqual({
      reason: 'session-lost',
      httpStatus: 404,
      statusText: 'backend scripted: session not found (HTTP 404); re-initializing',
    });
    expect(await refusalOf(c.request(ping(), SESSION))).toMatchObject({
      reason: 'session-lost',
      httpStatus: 400,
    });
    expect(await refusalOf(c.request(ping(), SESSION))).toEqual({
      reason: 'http-status',
      httpStatus: 401,
      statusText:
        "backend scripted: rejected the broker's credentials (HTTP 401); check mcpBroker.servers[].headers",
    });
    expect(
      await refusalOf(c.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, SESSION)),
    ).toMatchObject({ httpStatus: 403 });
    // Without a session, a 400 is just a 400.
    expect(await refusalOf(c.request(ping(), {}))).toMatchObject({
      statusText: 'backend scripted: answered HTTP 400',
      httpStatus: 400,
    });
    expect(await refusalOf(c.request(ping(), SESSION))).toMatchObject({
      statusText: 'backend scripted: answered HTTP 500',
    });
    expect(scripted.connections()).toBe(1); // error bodies are read, so the connection stays usable
  });

  it('maps POST 405 to an error and GET 405 to “not supported”', async () => {
    handler = (_req, res) => res.writeHead(405).end();
    const c = client();
    expect(await failureOf(c.request(ping(), SESSION))).toMatchObject({
      statusText: 'backend scripted: does not accept POST (HTTP 405)',
      httpStatus: 405,
    });
    expect(await c.openEventStream(SESSION, new AbortController().signal)).toBe('not-supported');
    expect(scripted.requests.map(r => [r.method, r.headers.accept])).toEqual([
      ['POST', 'application/json, text/event-stream'],
      ['GET', 'text/event-stream'],
    ]);
  });

  it('names the refused address without the credentials in its URL', async () => {
    await scripted.close();
    const c = client(2000, {
      ...backend,
      url: `http://broker:s3cret@127.0.0.1:${scripted.port}/mcp`,
    });
    expect(await failureOf(c.request(ping(), SESSION))).toMatchObject({
      reason: 'unreachable',
      statusText: `backend scripted: cannot reach http://127.0.0.1:${scripted.port}/mcp (ECONNREFUSED)`,
    });
    await expect(c.endSession(SESSION)).resolves.toBeUndefined(); // best effort: no throw
  });

  it('times out waiting for headers and, with other words, waiting for the answer on a stream', async () => {
    handler = (_req, res, body) => {
      if (body.includes('"id":1')) return; // never answers
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': still working\n\n'); // headers, but no answer
    };
    // Deadlines of a second and more: the stream's headers (sent at once) must arrive before the
    // deadline for the second and third answers, also on a loaded machine.
    const c = client(1000);
    expect(await failureOf(c.request(ping(1), SESSION))).toMatchObject({
      reason: 'timeout',
      statusText: 'backend scripted: timed out',
    });
    expect(await failureOf(c.request(ping(2), SESSION))).toMatchObject({
      statusText: 'backend scripted: tools/list timed out',
    });
    // A request's own timeout replaces the channel's: it ends after 1.5 s, not 1 s.
    const started = Date.now();
    expect(await failureOf(c.request(ping(2), SESSION, { timeoutMs: 1500 }))).toMatchObject({
      statusText: 'backend scripted: tools/list timed out',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1450);
  });

  it('rejects with the abort reason when a caller aborts, and leaves no listener on long-lived signals', async () => {
    let answer = true;
    handler = (_req, res, body) => {
      if (answer) json(res, 200, { jsonrpc: '2.0', id: JSON.parse(body).id, result: {} });
      else res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': working\n\n');
    };
    const lifetime = new AbortController();
    const c = client();
    for (let i = 1; i <= 20; i++) await c.request(ping(i), SESSION, { signals: [lifetime.signal] });
    await c.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, SESSION, {
      signals: [lifetime.signal],
    });
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);

    answer = false;
    const caller = new AbortController();
    const sent = scripted.requests.length;
    const pending = errorOf(
      c.request(ping(21), SESSION, { signals: [caller.signal, lifetime.signal] }),
    );
    await waitFor(() => scripted.requests.length > sent, 'the request to reach the server');
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(1); // while the request runs
    caller.abort();
    const error = await pending;
    expect(error?.name).toBe('AbortError');
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });

  it('keeps the event stream open past the header timeout until its signal aborts, then closes it', async () => {
    // Fake timers (the sockets stay real): the header timeout is due long before the event.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      let stream: http.ServerResponse | undefined;
      const streamClosed = new Promise<void>(resolve => {
        handler = (_req, res) => {
          stream = res;
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(': open\n\n');
          res.on('close', () => resolve());
        };
      });
      const cycle = new AbortController();
      const c = client(50);
      const response = await c.openEventStream(SESSION, cycle.signal);
      if (response === 'not-supported') throw new Error('expected a stream');
      expect(scripted.requests[0].headers).toMatchObject({
        accept: 'text/event-stream',
        'mcp-session-id': 'upstream-session-1',
      });

      let eventArrived!: () => void;
      const arrived = new Promise<void>(resolve => (eventArrived = resolve));
      const events: string[] = [];
      const reading = (async () => {
        for await (const item of response) {
          events.push(item.type === 'message' ? item.parsed.text : item.text);
          eventArrived();
        }
      })().catch((error: unknown) => error);
      jest.advanceTimersByTime(200); // four header timeouts later
      stream!.write('data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');
      await arrived;
      expect(events).toEqual(['{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}']);
      expect(getEventListeners(cycle.signal, 'abort')).toHaveLength(1);

      cycle.abort();
      await expect(reading).resolves.toMatchObject({ name: 'AbortError' }); // the reading ends
      await streamClosed;
      await new Promise(resolve => setImmediate(resolve));
      expect(getEventListeners(cycle.signal, 'abort')).toHaveLength(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('times out an event stream whose headers never come, and refuses a GET answered without a stream', async () => {
    let hang = true;
    handler = (_req, res) => {
      if (!hang) json(res, 200, { jsonrpc: '2.0', id: 1, result: {} });
    };
    const c = client(100);
    const cycle = new AbortController();
    expect(await failureOf(c.openEventStream(SESSION, cycle.signal))).toMatchObject({
      statusText: 'backend scripted: timed out',
    });
    // An open deadline says so, also when it is the request timeout itself.
    expect(await failureOf(c.openEventStream(SESSION, cycle.signal, 50))).toMatchObject({
      statusText: 'backend scripted: the event stream did not open within 50 ms',
    });
    expect(await failureOf(c.openEventStream(SESSION, cycle.signal, 100))).toMatchObject({
      statusText: 'backend scripted: the event stream did not open within 100 ms',
    });
    hang = false;
    expect(await failureOf(c.openEventStream(SESSION, cycle.signal))).toMatchObject({
      statusText: 'backend scripted: answered GET without an event stream',
    });
    expect(getEventListeners(cycle.signal, 'abort')).toHaveLength(0);
  });

  it('ends a stream that sends an event larger than the limit with an error', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = `data: ${'x'.repeat(1024 * 1024)}`;
      for (let i = 0; i < 5; i++) res.write(chunk); // 5 MiB without an event end
    };
    const response = await client().openEventStream(SESSION, new AbortController().signal);
    if (response === 'not-supported') throw new Error('expected a stream');
    try {
      const read = async () => {
        for await (const _item of response) {
          // nothing arrives: the one event never ends
        }
      };
      await expect(read()).rejects.toMatchObject({ failure: 'too-large' });
    } finally {
      response.close();
    }
  });

  it('deletes the session with DELETE and the session header, and skips it without a session id', async () => {
    handler = (_req, res) => res.writeHead(200).end();
    const c = client();
    await c.endSession({ protocolVersion: '2025-06-18' });
    await c.endSession(SESSION);
    expect(scripted.requests).toHaveLength(1);
    expect(scripted.requests[0]).toMatchObject({
      method: 'DELETE',
      headers: { 'mcp-session-id': 'upstream-session-1' },
    });
  });
});
