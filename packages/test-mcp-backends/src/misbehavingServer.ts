/*
 * An MCP server that misbehaves on purpose (issue #41): the broker must bound what it does, answer
 * its clients with an error naming the server, and keep serving every other server and person.
 * Hand-written (node:http, 2025-11-25 without sessions, no event stream: GET answers 405) so
 * that it can break the protocol where an SDK server never would. Tools:
 * - `echo {message}`: behaves (shows the server works between the misbehaviours);
 * - `wrong_id`: answers the call with a response carrying another request's id;
 * - `silent`: opens the call's event stream and never sends anything on it;
 * - `malformed`: sends an event whose data is not JSON, then ends the stream;
 * - `endless`: sends progress notifications on the call's stream forever, never a result;
 * - `huge`: answers with a JSON body of 100 MiB (a result whose text never ends in time).
 * `calls` counts the calls of each tool that reached it.
 *
 * Options add the list cases: `extraTools` tools after those (`filler_1` …) served `pageSize`
 * per `tools/list` page, or `endlessCursor` (every page `page<n>_a` … with a next cursor, for
 * ever); `listChangedStream` advertises `tools.listChanged`, keeps GET event streams open and
 * adds the tool `flood {count, overMs}`, which sends `count` `notifications/tools/list_changed`
 * on them spread over `overMs` and answers once all are sent. `toolsListRequests` counts the
 * `tools/list` requests that reached it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running misbehaving server. */
export interface MisbehavingServer {
  url: string;
  /** Calls that reached it, by tool name. */
  readonly calls: ReadonlyMap<string, number>;
  /** `tools/list` requests that reached it (every page counts). */
  readonly toolsListRequests: number;
  close(): Promise<void>;
}

/** The list cases of {@link startMisbehavingServer}; see the file comment. */
export interface MisbehavingServerOptions {
  /** Tools listed after the misbehaving ones (`filler_1` …). Default 0. */
  extraTools?: number;
  /** Tools per `tools/list` page. Default: all in one page. */
  pageSize?: number;
  /** Every page lists `pageSize` new tools and a next cursor, for ever. */
  endlessCursor?: boolean;
  /** Advertise `tools.listChanged`, keep GET streams open, and serve the `flood` tool. */
  listChangedStream?: boolean;
}

const tool = (name: string) => ({
  name,
  description: `Misbehaves: ${name}`,
  inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
});
const TOOLS = ['echo', 'wrong_id', 'silent', 'malformed', 'endless', 'huge'].map(tool);

/** One `tools/list` page of a server with `options` (`cursor`: the page number as text). */
function toolsPage(options: MisbehavingServerOptions, cursor: unknown) {
  const page = typeof cursor === 'string' ? Number(cursor) : 0;
  if (options.endlessCursor) {
    const size = options.pageSize ?? 5;
    const tools = Array.from({ length: size }, (_, i) => tool(`page${page}_${i}`));
    return { tools, nextCursor: String(page + 1) };
  }
  const all = [
    ...TOOLS,
    ...(options.listChangedStream ? [tool('flood')] : []),
    ...Array.from({ length: options.extraTools ?? 0 }, (_, i) => tool(`filler_${i + 1}`)),
  ];
  const size = options.pageSize ?? all.length;
  const tools = all.slice(page * size, (page + 1) * size);
  return (page + 1) * size < all.length ? { tools, nextCursor: String(page + 1) } : { tools };
}

/** Sends `count` list_changed events to `streams`, spread over `overMs`; resolves when sent. */
function flood(streams: ReadonlySet<http.ServerResponse>, count: number, overMs: number) {
  const event = `event: message\ndata: ${JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/tools/list_changed',
  })}\n\n`;
  const ticks = Math.max(1, Math.floor(overMs / 10));
  let sent = 0;
  return new Promise<void>(resolve => {
    const timer = setInterval(() => {
      const batch = Math.min(Math.ceil(count / ticks), count - sent);
      for (const stream of streams) stream.write(event.repeat(batch));
      sent += batch;
      if (sent >= count) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
}

/** Starts the misbehaving server on a free loopback port. */
export async function startMisbehavingServer(
  options: MisbehavingServerOptions = {},
): Promise<MisbehavingServer> {
  const calls = new Map<string, number>();
  const open = new Set<http.ServerResponse>();
  const eventStreams = new Set<http.ServerResponse>();
  let toolsListRequests = 0;
  const json = (res: http.ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && options.listChangedStream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      eventStreams.add(res);
      res.on('close', () => eventStreams.delete(res));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', chunk => chunks.push(chunk));
    req.on('end', () => {
      let message: any;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const { id, method, params } = message;
      if (id === undefined) {
        res.writeHead(202).end();
        return;
      }
      if (method === 'initialize') {
        json(res, {
          jsonrpc: '2.0',
          id,
          result: {
            protocolVersion: params?.protocolVersion ?? '2025-11-25',
            capabilities: { tools: options.listChangedStream ? { listChanged: true } : {} },
            serverInfo: { name: 'misbehaving', version: '1.0.0' },
          },
        });
        return;
      }
      if (method === 'tools/list') {
        toolsListRequests += 1;
        json(res, { jsonrpc: '2.0', id, result: toolsPage(options, params?.cursor) });
        return;
      }
      if (method !== 'tools/call') {
        json(res, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
        return;
      }
      const name = String(params?.name);
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const stream = () => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        open.add(res);
        res.on('close', () => open.delete(res));
      };
      switch (name) {
        case 'flood': {
          const count = Number(params?.arguments?.count ?? 1000);
          const overMs = Number(params?.arguments?.overMs ?? 1000);
          void flood(eventStreams, count, overMs).then(() =>
            json(res, {
              jsonrpc: '2.0',
              id,
              result: { content: [{ type: 'text', text: `sent ${count}` }] },
            }),
          );
          return;
        }
        case 'echo':
          json(res, {
            jsonrpc: '2.0',
            id,
            result: { content: [{ type: 'text', text: String(params?.arguments?.message ?? '') }] },
          });
          return;
        case 'wrong_id':
          json(res, {
            jsonrpc: '2.0',
            id: typeof id === 'number' ? id + 1000 : `${id}-other`,
            result: { content: [{ type: 'text', text: 'an answer to another request' }] },
          });
          return;
        case 'silent':
          stream();
          res.flushHeaders();
          return;
        case 'malformed':
          stream();
          res.end('event: message\ndata: {"jsonrpc": "2.0", "id": oops\n\n');
          return;
        case 'endless': {
          stream();
          const token = params?._meta?.progressToken ?? 'endless';
          let n = 0;
          const tick = setInterval(() => {
            n += 1;
            res.write(
              `event: message\ndata: ${JSON.stringify({
                jsonrpc: '2.0',
                method: 'notifications/progress',
                params: { progressToken: token, progress: n },
              })}\n\n`,
            );
          }, 20);
          res.on('close', () => clearInterval(tick));
          return;
        }
        case 'huge': {
          res.writeHead(200, { 'content-type': 'application/json' });
          open.add(res);
          res.on('close', () => open.delete(res));
          res.write(
            `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`,
          );
          const chunk = 'x'.repeat(1024 * 1024);
          let left = 100;
          const pump = () => {
            while (left > 0 && !res.destroyed) {
              left -= 1;
              if (!res.write(chunk)) {
                res.once('drain', pump);
                return;
              }
            }
            if (!res.destroyed) res.end('"}]}}');
          };
          pump();
          return;
        }
        default:
          json(res, { jsonrpc: '2.0', id, error: { code: -32602, message: 'Unknown tool' } });
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get toolsListRequests() {
      return toolsListRequests;
    },
    async close() {
      for (const res of [...open, ...eventStreams]) res.destroy();
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}
