/*
 * The forwarding half of the small HTTP fronts some tests put before a real MCP server (a slow
 * relay, a front that fails chosen methods): one request to the server behind, its answer
 * streamed back as it comes (event streams included), and each side's end ending the other.
 */
import http from 'node:http';

/**
 * Forwards `req` to `target` (its host and port; the path is the request's) and streams the
 * answer into `res`. `body` is the request body when the caller has already read it; otherwise
 * the request is piped.
 */
export function forwardHttp(
  target: URL,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body?: Buffer,
): void {
  const forwarded = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: req.url,
      method: req.method,
      headers: { ...req.headers, host: target.host },
      agent: false,
    },
    answer => {
      // Headers at once: an event stream's may come long before its first event.
      res.writeHead(answer.statusCode ?? 502, answer.headers).flushHeaders();
      answer.pipe(res);
    },
  );
  forwarded.on('error', () => res.destroy());
  // A client closing an event stream closes it at the server behind the front too.
  res.on('close', () => forwarded.destroy());
  if (body === undefined) req.pipe(forwarded);
  else forwarded.end(body);
}
