/*
 * A recording front for an HTTP server, for end-to-end tests that must see what reached a
 * server running inside the backend process (Backstage's own MCP server): every request is
 * forwarded as it is, its answer streamed back, and its credential headers (and every header)
 * recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running recording proxy. */
export interface RecordingProxy {
  /** The proxy's base URL (`http://127.0.0.1:<port>`). */
  baseUrl: string;
  /** Where requests go (scheme, host, port); may be set after the proxy started. */
  target: URL | undefined;
  /** The `Authorization` (and `Cookie`) header of every request, in arrival order. */
  readonly credentials: Array<{ authorization?: string; cookie?: string }>;
  /** Every header of every request (names in lower case), in arrival order. */
  readonly headers: Array<Readonly<Record<string, string>>>;
  close(): Promise<void>;
}

/** Starts a recording proxy on a free loopback port. */
export async function startRecordingProxy(): Promise<RecordingProxy> {
  const proxy: RecordingProxy = {
    baseUrl: '',
    target: undefined,
    credentials: [],
    headers: [],
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    proxy.credentials.push({
      ...(req.headers.authorization === undefined
        ? {}
        : { authorization: req.headers.authorization }),
      ...(req.headers.cookie === undefined ? {} : { cookie: req.headers.cookie }),
    });
    proxy.headers.push(
      Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : String(value),
        ]),
      ),
    );
    const target = proxy.target;
    if (target === undefined) {
      res.writeHead(503).end();
      return;
    }
    const forwarded = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      answer => {
        res.writeHead(answer.statusCode ?? 502, answer.headers).flushHeaders();
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  proxy.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>(resolve => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
