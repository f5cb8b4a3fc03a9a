/*
 * The 2025-11-25 session handling of the test servers built on the SDK 1.x: one McpServer and
 * one StreamableHTTPServerTransport per session, created by an `initialize` without a session
 * id; a request naming an unknown session answers 404, any other request without one 400 (as the
 * SDK's own examples do), and the body reading they share.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** A POST's JSON body (undefined for another method, or a body that is not JSON). */
export async function readJsonBody(req: http.IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST') return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Sessions of a test server: `serve` one request (its body already read), `close` them all. */
export interface LegacySessions {
  serve(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves sessions of servers made by `newServer`; `onClosed` runs when the session of the server
 * it was made with ends.
 */
export function legacySessions(
  newServer: () => { server: McpServer; onClosed?: () => void },
): LegacySessions {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return {
    async serve(req, res, body) {
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
          res.writeHead(sessionId !== undefined ? 404 : 400, {
            'content-type': 'application/json',
          });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32000, message: 'Bad Request: no valid session' },
            }),
          );
          return;
        }
        const { server, onClosed } = newServer();
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: id => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          onClosed?.();
          if (created.sessionId !== undefined) transports.delete(created.sessionId);
        };
        await server.connect(created);
        transport = created;
      }
      await transport.handleRequest(req as any, res, body);
    },
    async close() {
      for (const transport of transports.values()) await transport.close();
      transports.clear();
    },
  };
}

/**
 * Serves `sessions` at `http://127.0.0.1:<port>/mcp` — a free port unless `port` is given (every
 * path answers; a failing request gets a 500 with the error); `close` ends the sessions, then the
 * server.
 */
export async function listenLegacySessions(
  sessions: LegacySessions,
  port = 0,
): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const httpServer = http.createServer((req, res) => {
    (async () => {
      await sessions.serve(req, res, await readJsonBody(req));
    })().catch(error => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, '127.0.0.1', resolve);
  });
  const bound = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    async close() {
      await sessions.close();
      httpServer.closeAllConnections();
      await new Promise<void>(resolve => httpServer.close(() => resolve()));
    },
  };
}
