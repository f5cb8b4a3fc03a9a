/*
 * An MCP backend written without the SDK: node:http, hand-written JSON-RPC and SSE. It exists to
 * observe exactly what a broker sends — ids with their JSON type, cancellations, headers, declared
 * capabilities — which an SDK server would normalise or hide.
 *
 * Tools:
 * - `elicit {id, method?, alsoId?, url?}`: sends `elicitation/create` (URL mode with `url`, else
 *   form mode; or `method`:
 *   `sampling/createMessage`, `roots/list`) with the given raw JSON id token (`"s-1"`, `42`,
 *   `7.5`, …) on the call's stream, waits for the answer (one progress notification per answer
 *   when asked for progress), and returns what came back. With
 *   `alsoId`, a second request of the same method goes out in the same write (one TCP chunk), and
 *   the tool returns once both are answered (`structuredContent.also` is the second answer).
 *   With `thenWaitForCancel: true` it does not return after the answers but waits, as
 *   `wait_for_cancel` does, until the call is cancelled.
 * - `wait_for_cancel`: sends one progress notification (when asked for progress) and then waits
 *   until the call is cancelled; the stream then ends without a result, as MCP prescribes.
 * - `progress {steps}`: sends `steps` progress notifications, then a result.
 * - `hold`: never answers and ignores cancellation, so only the broker can end the call (by
 *   closing its stream); `callEvents` shows in which order cancellation and close arrived.
 * - `crash`: sends one progress notification and then destroys its connection, as a crashing
 *   server would.
 * - `flood {megabytes}`: streams one SSE event that never ends, to test message size limits.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { jsonIdType, rawTopLevelMember } from './rawJson';

/** What came back for one `elicitation/create` the raw backend sent. */
export interface RecordedAnswer {
  sessionId: string;
  /** The method of the request that was answered. */
  method: string;
  /** The id token the backend sent. */
  sentId: string;
  /** The id token of the response it received, exactly as written. */
  receivedId: string | undefined;
  receivedType: ReturnType<typeof jsonIdType>;
  /** The response's `result` (or `error`). */
  body: unknown;
}

/** A `notifications/cancelled` the raw backend received. */
export interface RecordedCancellation {
  sessionId: string;
  /** `params.requestId` as written. */
  requestId: string | undefined;
  reason: unknown;
}

/** Something that happened to a call in flight, in arrival order (see `callEvents`). */
export interface RecordedCallEvent {
  /** `cancelled`: its `notifications/cancelled` arrived; `stream-closed`: the broker closed it. */
  type: 'cancelled' | 'stream-closed';
  /** The call's raw request id. */
  requestId: string | undefined;
}

/** A request as the raw backend received it. */
export interface RecordedRequest {
  sessionId: string | undefined;
  method: string | undefined;
  /** The raw id token (undefined for notifications and responses without one). */
  id: string | undefined;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A running raw backend. */
export interface RawMcpBackend {
  url: string;
  /** Every POST body, in arrival order. */
  readonly requests: RecordedRequest[];
  readonly answers: RecordedAnswer[];
  readonly cancellations: RecordedCancellation[];
  /** Cancellations and broker-side stream closes of calls, in the order they arrived. */
  readonly callEvents: RecordedCallEvent[];
  /** Sessions ended by DELETE. */
  readonly deletedSessions: string[];
  /** Declared client capabilities per session. */
  capabilitiesOf(sessionId: string): unknown;
  /** Live session ids. */
  sessionIds(): string[];
  close(): Promise<void>;
}

interface PendingCall {
  callId: string;
  res: http.ServerResponse;
  onCancel: () => void;
}

interface Session {
  capabilities: unknown;
  /** Outstanding elicitations by the sent raw id. */
  waiting: Map<string, (answer: { receivedId: string | undefined; body: unknown }) => void>;
  /** Calls in flight by their raw request id. */
  calls: Map<string, PendingCall>;
}

const TOOLS = [
  {
    name: 'elicit',
    description: 'Sends elicitation/create with the given raw JSON id and reports what came back',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        method: { type: 'string' },
        alsoId: { type: 'string' },
        thenWaitForCancel: { type: 'boolean' },
        url: { type: 'string' },
      },
      required: ['id'],
    },
  },
  {
    name: 'wait_for_cancel',
    description: 'Waits until cancelled',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'progress',
    description: 'Sends progress notifications',
    inputSchema: { type: 'object', properties: { steps: { type: 'integer' } } },
  },
  {
    name: 'hold',
    description: 'Never answers, even when cancelled',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'crash',
    description: 'Breaks its connection mid-call',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'flood',
    description: 'Streams one never-ending SSE event of `megabytes` MiB',
    inputSchema: { type: 'object', properties: { megabytes: { type: 'integer' } } },
  },
];

/** Options of {@link startRawMcpBackend}. */
export interface RawMcpBackendOptions {
  /**
   * Takes each notification (and answers its POST) only after this long, as a busy backend
   * would: shows whether a sender waits for a notification to be taken before acting on.
   */
  notificationDelayMs?: number;
}

/** Starts the raw backend on a free loopback port. */
export async function startRawMcpBackend(
  options: RawMcpBackendOptions = {},
): Promise<RawMcpBackend> {
  const sessions = new Map<string, Session>();
  const requests: RecordedRequest[] = [];
  const answers: RecordedAnswer[] = [];
  const cancellations: RecordedCancellation[] = [];
  const callEvents: RecordedCallEvent[] = [];
  const deletedSessions: string[] = [];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', chunk => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });

  function json(
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  function sse(res: http.ServerResponse, text: string) {
    res.write(`event: message\ndata: ${text}\n\n`);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, text: string) {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    if (req.method === 'DELETE') {
      if (sessionId !== undefined && sessions.delete(sessionId)) deletedSessions.push(sessionId);
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST, DELETE' }).end();
      return;
    }
    let message: Record<string, any>;
    try {
      message = JSON.parse(text);
    } catch {
      json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    const rawId = rawTopLevelMember(text, 'id');
    requests.push({ sessionId, method: message.method, id: rawId, headers: req.headers, text });

    if (message.method === 'initialize') {
      const id = randomUUID();
      sessions.set(id, {
        capabilities: message.params?.capabilities,
        waiting: new Map(),
        calls: new Map(),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': id });
      res.end(
        `{"jsonrpc":"2.0","id":${rawId},"result":${JSON.stringify({
          protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'raw-test-backend', version: '0.0.0' },
        })}}`,
      );
      return;
    }
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (!session) {
      json(res, 404, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Session not found' },
      });
      return;
    }
    if (message.method === undefined) {
      // A response: an answer to one of our elicitations.
      const waiter = [...session.waiting.entries()].find(([sent]) => sameIdValue(sent, rawId));
      if (waiter) {
        session.waiting.delete(waiter[0]);
        waiter[1]({ receivedId: rawId, body: message.result ?? message.error });
      }
      res.writeHead(202).end();
      return;
    }
    if (rawId === undefined) {
      const take = () => takeNotification(sessionId!, session, message, text, res);
      if ((options.notificationDelayMs ?? 0) > 0) setTimeout(take, options.notificationDelayMs);
      else take();
      return;
    }
    if (message.method === 'tools/list') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":${rawId},"result":${JSON.stringify({ tools: TOOLS })}}`);
      return;
    }
    if (message.method === 'tools/call') {
      callTool(sessionId!, session, rawId, message.params ?? {}, res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"jsonrpc":"2.0","id":${rawId},"error":{"code":-32601,"message":"Method not found"}}`);
  }

  function takeNotification(
    sessionId: string,
    session: Session,
    message: Record<string, any>,
    text: string,
    res: http.ServerResponse,
  ) {
    if (message.method === 'notifications/cancelled') {
      const rawParams = rawTopLevelMember(text, 'params');
      const requestId =
        rawParams === undefined ? undefined : rawTopLevelMember(rawParams, 'requestId');
      cancellations.push({ sessionId, requestId, reason: message.params?.reason });
      callEvents.push({ type: 'cancelled', requestId });
      const call = requestId === undefined ? undefined : session.calls.get(requestId);
      call?.onCancel();
    }
    res.writeHead(202).end();
  }

  function callTool(
    sessionId: string,
    session: Session,
    rawId: string,
    params: any,
    res: http.ServerResponse,
  ) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const progressToken = params._meta?.progressToken;
    const finish = (result: unknown) => {
      session.calls.delete(rawId);
      sse(res, `{"jsonrpc":"2.0","id":${rawId},"result":${JSON.stringify(result)}}`);
      res.end();
    };
    const progress = (n: number, total?: number) => {
      if (progressToken !== undefined) {
        sse(
          res,
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken, progress: n, total },
          }),
        );
      }
    };
    const call: PendingCall = { callId: rawId, res, onCancel: () => undefined };
    session.calls.set(rawId, call);
    res.on('close', () => {
      session.calls.delete(rawId);
      if (!res.writableFinished) callEvents.push({ type: 'stream-closed', requestId: rawId });
    });
    const waitForCancel = () => {
      call.onCancel = () => {
        session.calls.delete(rawId);
        res.end(); // no result for a cancelled request
      };
    };
    switch (params.name) {
      case 'elicit': {
        const method = String(params.arguments?.method ?? 'elicitation/create');
        const sentIds = [String(params.arguments?.id ?? '1')];
        if (params.arguments?.alsoId !== undefined) sentIds.push(String(params.arguments.alsoId));
        const received: RecordedAnswer[] = [];
        for (const sentId of sentIds) {
          session.waiting.set(sentId, ({ receivedId, body }) => {
            const answer: RecordedAnswer = {
              sessionId,
              method,
              sentId,
              receivedId,
              receivedType: jsonIdType(receivedId),
              body,
            };
            answers.push(answer);
            received.push(answer);
            progress(received.length, sentIds.length);
            if (received.length < sentIds.length) return;
            if (params.arguments?.thenWaitForCancel === true) {
              waitForCancel();
              return;
            }
            const [first, also] = sentIds.map(id => received.find(a => a.sentId === id)!);
            finish({
              content: [{ type: 'text', text: JSON.stringify(first) }],
              structuredContent: {
                sentId: first.sentId,
                receivedId: first.receivedId,
                receivedType: first.receivedType,
                answer: first.body,
                ...(also === undefined ? {} : { also }),
              },
            });
          });
        }
        // One write: both requests reach the broker in the same chunk.
        res.write(
          sentIds
            .map(
              sentId =>
                `event: message\ndata: {"jsonrpc":"2.0","id":${sentId},"method":"${method}"` +
                `,"params":${JSON.stringify(
                  inputRequestParams(method, sentId, params.arguments?.url),
                )}}\n\n`,
            )
            .join(''),
        );
        return;
      }
      case 'wait_for_cancel':
        progress(1);
        waitForCancel();
        return;
      case 'hold':
        progress(1);
        return;
      case 'progress': {
        const steps = Number(params.arguments?.steps ?? 3);
        for (let i = 1; i <= steps; i++) progress(i, steps);
        finish({ content: [{ type: 'text', text: `${steps} steps` }] });
        return;
      }
      case 'flood': {
        const chunk = 'x'.repeat(1024 * 1024);
        let left = Number(params.arguments?.megabytes ?? 20);
        res.write('event: message\ndata: ');
        const pump = () => {
          while (left > 0 && !res.destroyed) {
            left--;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
        };
        pump();
        return;
      }
      case 'crash':
        progress(1);
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      default:
        session.calls.delete(rawId);
        sse(
          res,
          `{"jsonrpc":"2.0","id":${rawId},"error":{"code":-32602,"message":"Unknown tool"}}`,
        );
        res.end();
    }
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    answers,
    cancellations,
    callEvents,
    deletedSessions,
    capabilitiesOf: id => sessions.get(id)?.capabilities,
    sessionIds: () => [...sessions.keys()],
    async close() {
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}

/** Params of the server-to-client request the `elicit` tool sends. */
function inputRequestParams(method: string, sentId: string, url: unknown): Record<string, unknown> {
  if (method === 'roots/list') return {};
  if (typeof url === 'string') {
    return {
      mode: 'url',
      url,
      message: `Open the link for ${sentId}`,
      elicitationId: `e-${sentId}`,
    };
  }
  if (method === 'sampling/createMessage') {
    return {
      messages: [{ role: 'user', content: { type: 'text', text: `Sample for ${sentId}` } }],
      maxTokens: 16,
    };
  }
  return {
    message: `Answer request ${sentId}`,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  };
}

/** True when two raw id tokens denote the same value, whatever their JSON type. */
function sameIdValue(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  try {
    return String(JSON.parse(a)) === String(JSON.parse(b));
  } catch {
    return false;
  }
}
