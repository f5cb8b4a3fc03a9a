/*
 * A real HTTP server on loopback whose answers a test scripts, for the tests of the HTTP
 * transport layers (httpExchange, HttpBackendTransport, LegacyChannel): each request is read
 * whole and handed to the test's handler with its body; the server records every request and
 * counts the connections it accepted, so a test can see that a connection was reused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Answers one request; `body` is the whole request body as text. */
export type ScriptedHttpHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: string,
) => void;

/** A request the server received. */
export interface ScriptedHttpRequest {
  method?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A running scripted server. */
export interface ScriptedHttpServer {
  /** The node server itself, for tests that tune it (keep-alive) or watch its sockets. */
  readonly server: http.Server;
  readonly port: number;
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** Every request received so far, in order. */
  readonly requests: ScriptedHttpRequest[];
  /** The number of TCP connections accepted so far. */
  connections(): number;
  /** Closes the server and its connections; again after the first time, does nothing. */
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 (a free port) that answers every request with `handle`. */
export async function startScriptedHttpServer(
  handle: ScriptedHttpHandler,
): Promise<ScriptedHttpServer> {
  const requests: ScriptedHttpRequest[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', chunk => (body += chunk));
    req.on('end', () => {
      requests.push({ method: req.method, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    connections: () => connections,
    close() {
      closed ??= new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
