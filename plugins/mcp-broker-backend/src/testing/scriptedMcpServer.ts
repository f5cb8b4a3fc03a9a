/*
 * A deliberately small, scriptable MCP server (raw node:http + SSE) for tests of behaviour that
 * real servers cannot be made to show on demand: malformed events, forgotten sessions (404),
 * no event stream (GET → 405), restarts on the same port. It speaks just enough streamable
 * HTTP for the broker: initialize, notifications/initialized, tools/list, tools/call (echo),
 * ping, empty prompt and resource lists, DELETE, and a GET event stream into which the test
 * writes raw SSE frames (or which it ends, at once or later, with the session kept).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options of {@link startScriptedMcpServer}. */
export interface ScriptedMcpServerOptions {
  /** Port to listen on (0 picks one; reuse a port to "restart" a server). */
  port?: number;
  /** Tool names listed by tools/list; default `['echo']`. */
  tools?: string[];
  /** The `inputSchema` of some tools by name; others get `{ type: 'object' }`. */
  inputSchemas?: Record<string, Record<string, unknown>>;
  /** More fields of some tools by name (e.g. `execution`), listed as given. */
  toolFields?: Record<string, Record<string, unknown>>;
  /** Answer GET with 405 (no event stream) instead of opening one. */
  noEventStream?: boolean;
  /** End every GET event stream right after opening it (the session stays valid). */
  endEventStreamsAtOnce?: boolean;
  /** Take GET requests but never answer them (no headers): an event stream that never opens. */
  holdEventStreams?: boolean;
  /** Capabilities to advertise; default tools.listChanged only. */
  capabilities?: Record<string, unknown>;
  /** Header value every request must carry in `Authorization` (else 401). */
  requiredAuthorization?: string;
}

/** A running scripted server. */
export interface ScriptedMcpServer {
  url: string;
  port: number;
  /** The current tool names (mutable: change it, then call `sendEvent`). */
  tools: string[];
  /** Whether GET event streams end right after opening (mutable). */
  endEventStreamsAtOnce: boolean;
  /** Whether GET requests are held without an answer (mutable). */
  holdEventStreams: boolean;
  /** Number of GET requests held without an answer so far. */
  eventStreamsHeld(): number;
  /** Number of GET event streams opened so far. */
  eventStreamsOpened(): number;
  /** Ends every open event stream; the sessions stay valid. */
  endEventStreams(): void;
  /** Number of `initialize` requests seen. */
  initializeCount(): number;
  /** Number of GET event streams open now. */
  openEventStreams(): number;
  /** Authorization headers seen on every request, in order. */
  authorizationHeaders(): Array<string | undefined>;
  /** The `traceparent` header of every `tools/call`, in order (undefined: none sent). */
  toolCallTraceparents(): Array<string | undefined>;
  /** The `params._meta` of every `tools/call`, in order (undefined: none sent). */
  toolCallMetas(): Array<Record<string, unknown> | undefined>;
  /** Writes a raw SSE frame (e.g. `data: {...}\n\n`) to every open event stream. */
  sendRaw(frame: string): void;
  /** Sends a well-formed `notifications/<kind>/list_changed` to every open event stream. */
  sendListChanged(kind?: 'tools' | 'resources' | 'prompts' | 'roots'): void;
  /** Forgets every session (later requests with their ids get 404) and ends event streams. */
  forgetSessions(): void;
  close(): Promise<void>;
}

/** Starts a scripted MCP server on 127.0.0.1. */
export async function startScriptedMcpServer(
  options: ScriptedMcpServerOptions = {},
): Promise<ScriptedMcpServer> {
  const sessions = new Set<string>();
  const streams = new Set<http.ServerResponse>();
  const held = new Set<http.ServerResponse>();
  let eventStreamsHeld = 0;
  const authorizations: Array<string | undefined> = [];
  const toolCallTraceparents: Array<string | undefined> = [];
  const toolCallMetas: Array<Record<string, unknown> | undefined> = [];
  let initializeCount = 0;
  let eventStreamsOpened = 0;
  const state = {
    tools: [...(options.tools ?? ['echo'])],
    endEventStreamsAtOnce: options.endEventStreamsAtOnce ?? false,
    holdEventStreams: options.holdEventStreams ?? false,
  };
  const capabilities = options.capabilities ?? { tools: { listChanged: true } };

  const reply = (res: http.ServerResponse, status: number, body?: unknown) => {
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    if (
      options.requiredAuthorization !== undefined &&
      req.headers.authorization !== options.requiredAuthorization
    ) {
      reply(res, 401, { error: 'unauthorized' });
      return;
    }
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    if (sessionId !== undefined && !sessions.has(sessionId)) {
      reply(res, 404, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Session not found' },
      });
      return;
    }
    if (req.method === 'GET') {
      if (options.noEventStream) {
        reply(res, 405);
        return;
      }
      if (state.holdEventStreams) {
        eventStreamsHeld++;
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': open\n\n');
      eventStreamsOpened++;
      if (state.endEventStreamsAtOnce) {
        res.end();
        return;
      }
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'DELETE') {
      if (sessionId !== undefined) sessions.delete(sessionId);
      reply(res, 200);
      return;
    }
    let raw = '';
    req.on('data', chunk => {
      raw += chunk;
    });
    req.on('end', () => {
      let message: {
        id?: string | number;
        method?: string;
        params?: {
          name?: string;
          arguments?: { message?: string };
          _meta?: Record<string, unknown>;
        };
      };
      try {
        message = JSON.parse(raw);
      } catch {
        reply(res, 400, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: 'Parse error' },
        });
        return;
      }
      if (message.id === undefined) {
        reply(res, 202);
        return;
      }
      const result = (value: unknown) =>
        reply(res, 200, { jsonrpc: '2.0', id: message.id, result: value });
      switch (message.method) {
        case 'initialize': {
          initializeCount++;
          const id = randomUUID();
          sessions.add(id);
          res.setHeader('mcp-session-id', id);
          result({
            protocolVersion: '2025-06-18',
            capabilities,
            serverInfo: { name: 'scripted', version: '0' },
          });
          return;
        }
        case 'ping':
          result({});
          return;
        case 'tools/list':
          result({
            tools: state.tools.map(name => ({
              name,
              description: `scripted ${name}`,
              inputSchema: options.inputSchemas?.[name] ?? { type: 'object' },
              ...options.toolFields?.[name],
            })),
          });
          return;
        // Empty lists: a test advertises prompts or resources to send their list_changed (a
        // marker ordered after everything sent before it, or a listen stream's event), not to
        // list anything.
        case 'prompts/list':
          result({ prompts: [] });
          return;
        case 'resources/list':
          result({ resources: [] });
          return;
        case 'resources/templates/list':
          result({ resourceTemplates: [] });
          return;
        case 'tools/call':
          toolCallTraceparents.push([req.headers.traceparent].flat()[0]);
          toolCallMetas.push(message.params?._meta);
          result({
            content: [
              {
                type: 'text',
                text: `scripted ${message.params?.name}: ${message.params?.arguments?.message ?? ''}`,
              },
            ],
          });
          return;
        default:
          reply(res, 200, {
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32601, message: 'Method not found' },
          });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endEventStreams = () => {
    for (const stream of streams) stream.end();
  };

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    get tools() {
      return state.tools;
    },
    set tools(names: string[]) {
      state.tools = names;
    },
    get endEventStreamsAtOnce() {
      return state.endEventStreamsAtOnce;
    },
    set endEventStreamsAtOnce(value: boolean) {
      state.endEventStreamsAtOnce = value;
    },
    get holdEventStreams() {
      return state.holdEventStreams;
    },
    set holdEventStreams(value: boolean) {
      state.holdEventStreams = value;
    },
    eventStreamsHeld: () => eventStreamsHeld,
    eventStreamsOpened: () => eventStreamsOpened,
    endEventStreams,
    initializeCount: () => initializeCount,
    openEventStreams: () => streams.size,
    authorizationHeaders: () => [...authorizations],
    toolCallTraceparents: () => [...toolCallTraceparents],
    toolCallMetas: () => [...toolCallMetas],
    sendRaw(frame: string) {
      for (const stream of streams) stream.write(frame);
    },
    sendListChanged(kind = 'tools') {
      const frame = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` })}\n\n`;
      for (const stream of streams) stream.write(frame);
    },
    forgetSessions() {
      sessions.clear();
      endEventStreams();
    },
    async close() {
      for (const stream of streams) stream.destroy();
      for (const stream of held) stream.destroy();
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}
