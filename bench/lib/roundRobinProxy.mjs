/*
 * A plain round-robin HTTP proxy in front of backend replicas, as a load balancer would be: each
 * request (SSE streams included) goes to the next replica in rotation, byte for byte. `remove`
 * takes a replica out of rotation (Kubernetes removing an endpoint when its pod is terminating);
 * requests already forwarded to it go on. When a replica cannot be reached, or closes the
 * connection before answering, the proxy answers 503 with `Retry-After: 1` (as Envoy or nginx
 * answer an upstream connect error), which a client following HTTP retries. It counts those.
 */
import http from 'node:http';

/** Starts the proxy on a free loopback port. */
export async function startRoundRobinProxy() {
  /** @type {{ id: string, port: number }[]} */
  let targets = [];
  let next = 0;
  const counts = { forwarded: 0, upstreamFailures: 0, noTarget: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  const unavailable = (res, why) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' });
    res.end(`no replica answered: ${why}`);
  };

  const server = http.createServer((req, res) => {
    if (targets.length === 0) {
      counts.noTarget += 1;
      unavailable(res, 'no replica in rotation');
      return;
    }
    const target = targets[next++ % targets.length];
    counts.forwarded += 1;
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      answer => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', error => {
      counts.upstreamFailures += 1;
      unavailable(res, `${target.id}: ${error.code ?? error.message}`);
    });
    // A client that goes away takes its upstream request with it.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    baseUrl: `http://localhost:${port}`,
    counts,
    /** Puts a replica into rotation. */
    add(id, targetPort) {
      targets = [...targets, { id, port: targetPort }];
    },
    /** Takes a replica out of rotation (requests in flight to it go on). */
    remove(id) {
      targets = targets.filter(t => t.id !== id);
    },
    async close() {
      server.closeAllConnections();
      agent.destroy();
      await new Promise(resolve => server.close(() => resolve()));
    },
  };
}
