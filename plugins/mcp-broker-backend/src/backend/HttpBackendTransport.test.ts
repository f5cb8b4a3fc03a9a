/*
 * HttpBackendTransport, the message-level transport, against a real HTTP server on loopback
 * whose answers each test scripts: what crosses the seam is messages and failure kinds, never
 * HTTP; the 2026-07-28 body is mirrored into its headers; a 2026-07-28 backend's JSON-RPC error
 * body is its answer, while the same body from a session-era backend is a refusal.
 */
import http from 'node:http';
import { scanParamHeaders } from '../protocol/paramHeaders';
import type { BackendReply, BackendRoute, BackendStreamItem } from './backendTransport';
import { HttpBackendTransport } from './HttpBackendTransport';
import { connectionReturned } from './testing/connectionReturned';
import {
  startScriptedHttpServer,
  type ScriptedHttpHandler,
  type ScriptedHttpServer,
} from './testing/scriptedHttpServer';

describe('HttpBackendTransport', () => {
  let scripted: ScriptedHttpServer;
  let handler: ScriptedHttpHandler;
  let route: BackendRoute;
  const transport = HttpBackendTransport.shared;
  const signal = () => new AbortController().signal;
  const request = (method = 'tools/list') => ({
    text: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
    method,
    request: true,
  });

  beforeEach(async () => {
    scripted = await startScriptedHttpServer((req, res, body) => handler(req, res, body));
    route = {
      endpoint: { name: 'scripted', url: scripted.url, headers: {} },
      sessionId: 's-1',
      protocolVersion: '2025-11-25',
    };
  });

  afterEach(() => scripted.close());

  async function items(reply: BackendReply): Promise<BackendStreamItem[]> {
    const read: BackendStreamItem[] = [];
    for await (const item of reply) read.push(item);
    return read;
  }

  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: { failure?: string; detail?: string; status?: number }) => ({
        failure: error.failure,
        detail: error.detail,
        status: error.status,
      }),
    );

  it('turns each refusal into its failure kind, and keeps the connection for the next message', async () => {
    const answers: Array<[number, string]> = [
      [401, 'no'],
      [405, ''],
      [404, 'Not Found'],
      [400, '{"error":{"message":"Bad Request: No valid session ID provided"}}'],
      [400, 'bad request'],
      [500, 'oops'],
    ];
    handler = (_req, res) => {
      const [status, text] = answers.shift()!;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
    };
    const outOfSession = { ...route, sessionId: undefined };
    // Each refusal's body is read, so its connection goes back to the pool for the next one.
    const refusalOf = async (promise: Promise<unknown>) => {
      const failure = await failureOf(promise);
      await connectionReturned(scripted.url);
      return failure;
    };
    expect(await refusalOf(transport.send(route, request(), { signal: signal() }))).toEqual({
      failure: 'credentials',
      status: 401,
      detail: "rejected the broker's credentials (HTTP 401); check mcpBroker.servers[].headers",
    });
    expect(await refusalOf(transport.send(route, request(), { signal: signal() }))).toEqual({
      failure: 'not-supported',
      status: 405,
      detail: 'does not accept POST (HTTP 405)',
    });
    expect(await refusalOf(transport.send(outOfSession, request(), { signal: signal() }))).toEqual({
      failure: 'not-found',
      status: 404,
      detail: 'answered HTTP 404',
    });
    expect(await refusalOf(transport.send(route, request(), { signal: signal() }))).toMatchObject({
      failure: 'session-lost',
      status: 400,
    });
    expect(await refusalOf(transport.send(route, request(), { signal: signal() }))).toMatchObject({
      failure: 'refused',
      status: 400,
    });
    expect(await refusalOf(transport.send(route, request(), { signal: signal() }))).toMatchObject({
      failure: 'server-error',
      status: 500,
    });
    expect(scripted.connections()).toBe(1);
  });

  it('answers a notification’s 202 with an empty reply, and refuses a request answered with neither JSON nor SSE', async () => {
    handler = (_req, res, body) => {
      if (body.includes('"id"')) res.writeHead(200, { 'content-type': 'text/html' }).end('<p>');
      else res.writeHead(202).end();
    };
    const notification = {
      text: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      method: 'notifications/initialized',
    };
    expect(await items(await transport.send(route, notification, { signal: signal() }))).toEqual(
      [],
    );
    expect(await failureOf(transport.send(route, request(), { signal: signal() }))).toEqual({
      failure: 'not-mcp',
      status: 200,
      detail: 'answered tools/list with unexpected content type "text/html"',
    });
  });

  it('mirrors a 2026-07-28 request into Mcp-Method, Mcp-Name and Mcp-Param-*, and nothing of it for the session era', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    handler = (req, res) => {
      seen.push(req.headers);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":1,"result":{}}');
    };
    const scan = scanParamHeaders({
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
    });
    const declarations = scan.valid ? scan.declarations : [];
    const call = {
      text: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grüße"}}',
      method: 'tools/call',
      request: true,
      name: 'grüße',
      arguments: { region: 'eu-west' },
    };
    const modern = { endpoint: route.endpoint, protocolVersion: '2026-07-28' };
    await items(
      await transport.send(modern, call, { signal: signal(), mirroredParams: declarations }),
    );
    await items(await transport.send(route, call, { signal: signal() }));
    expect(seen[0]).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': `=?base64?${Buffer.from('grüße').toString('base64')}?=`,
      'mcp-param-region': 'eu-west',
    });
    expect(seen[0]['mcp-session-id']).toBeUndefined();
    expect(Object.keys(seen[1]).filter(name => name.startsWith('mcp-'))).toEqual([
      'mcp-session-id',
      'mcp-protocol-version',
    ]);
  });

  it('gives a 2026-07-28 backend’s JSON-RPC error body as its answer, and a session-era one’s as a refusal', async () => {
    const error = { jsonrpc: '2.0', id: 1, error: { code: -32021, message: 'needs sampling' } };
    handler = (_req, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(error));
    const modern = { endpoint: route.endpoint, protocolVersion: '2026-07-28' };
    const reply = await transport.send(modern, request('tools/call'), { signal: signal() });
    expect(reply.single).toBe(true);
    expect(await items(reply)).toEqual([
      { type: 'message', eventId: undefined, parsed: expect.objectContaining({ message: error }) },
    ]);
    expect(
      await failureOf(
        transport.send({ ...route, sessionId: undefined }, request(), { signal: signal() }),
      ),
    ).toMatchObject({ failure: 'refused', status: 400 });
  });
});
