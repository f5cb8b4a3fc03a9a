/*
 * A tiny load balancer for the multi-replica tests: every HTTP request goes to the next backend
 * in turn (round robin, no stickiness), bodies stream both ways (SSE included), and a backend
 * that refuses the connection is skipped, as a load balancer's health check would. It records
 * which replica served each request, so tests can show that a session really alternated.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One forwarded request. */
export interface ForwardedRequest {
  /** Index of the replica that served it. */
  replica: number;
  method: string;
  /** The request body as text (JSON-RPC for POSTs). */
  body: string;
}

/** A running forwarder. */
export interface RoundRobinForwarder {
  /** Base URL of the forwarder (use it like a backend's baseUrl). */
  baseUrl: string;
  /** Every request served so far, in arrival order. */
  readonly log: ForwardedRequest[];
  close(): Promise<void>;
}

/** Starts a forwarder on a free loopback port in front of backends listening on `ports`. */
export async function startRoundRobinForwarder(
  ports: readonly number[],
): Promise<RoundRobinForwarder> {
  let next = 0;
  const log: ForwardedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', chunk => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      // Logged when sent, not when answered: a test may look before the answer arrives.
      const entry: ForwardedRequest = {
        replica: -1,
        method: req.method ?? '',
        body: body.toString('utf8'),
      };
      log.push(entry);
      const forward = (attempt: number) => {
        const replica = next++ % ports.length;
        const port = ports[replica];
        entry.replica = replica;
        const upstream = http.request(
          {
            host: '127.0.0.1',
            port,
            method: req.method,
            path: req.url,
            // The backend checks Host against its own base URL (DNS rebinding protection).
            headers: { ...req.headers, host: `localhost:${port}` },
          },
          response => {
            res.writeHead(response.statusCode ?? 502, response.headers);
            response.pipe(res);
            // A replica dying mid-stream must end the client's stream too, not leave it hanging.
            response.on('close', () => {
              if (!res.writableEnded) res.destroy();
            });
          },
        );
        upstream.on('error', () => {
          if (!res.headersSent && attempt + 1 < ports.length) {
            forward(attempt + 1);
          } else {
            res.destroy();
          }
        });
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      forward(0);
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    },
  };
}
