/*
 * A 2025-11-25 MCP session driven with raw HTTP, for end-to-end tests that must see every
 * status code and header the SDK client hides (a 503's Retry-After, which replica answered):
 * initialize, one POST at a time, and the JSON-RPC messages of an SSE response.
 */
import { mcpRawPost } from './mcpRawPost';

const PROTOCOL_VERSION = '2025-11-25';

/** The JSON-RPC messages of an SSE response, collected as they arrive. */
export interface SseMessages {
  messages: Array<Record<string, any>>;
  /** Resolves when the stream ends (or is cut off: the messages so far stay readable). */
  done: Promise<void>;
}

/**
 * Collects the JSON-RPC messages of an SSE response body; `onMessage`, if given, sees each one
 * as it arrives (for a client that answers what the stream asks, or times what it gets).
 */
export function sseMessages(
  response: Response,
  onMessage?: (message: Record<string, any>) => void,
): SseMessages {
  const messages: Array<Record<string, any>> = [];
  let buffer = '';
  const done = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event
            .split('\n')
            .filter(line => line.startsWith('data:'))
            .map(line => line.slice(5).trim())
            .join('\n');
          if (data === '') continue;
          const message = JSON.parse(data);
          messages.push(message);
          onMessage?.(message);
        }
      }
    } catch {
      // aborted or cut off
    }
  })();
  return { messages, done };
}

/** One answer of the broker: HTTP status, `Retry-After`, and the JSON-RPC response if any. */
export interface RawAnswer {
  status: number;
  retryAfter: string | null;
  /** The response to the request (the last message with its id), from JSON or SSE. */
  response?: Record<string, any>;
}

/** Reads a whole answer to the request `id` (JSON or an SSE stream that ends). */
export async function readAnswer(response: Response, id: unknown): Promise<RawAnswer> {
  const answer = { status: response.status, retryAfter: response.headers.get('retry-after') };
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const stream = sseMessages(response);
    await stream.done;
    return { ...answer, response: stream.messages.filter(m => m.id === id).at(-1) };
  }
  const text = await response.text();
  return { ...answer, response: text === '' ? undefined : JSON.parse(text) };
}

/** A raw session on one MCP endpoint (`…/api/mcp-broker/mcp`). */
export interface RawMcpSession {
  sessionId: string;
  /** POSTs one JSON-RPC message in the session. */
  post(body: unknown, signal?: AbortSignal): Promise<Response>;
  /** POSTs a request and reads its whole answer. */
  request(method: string, params: unknown, signal?: AbortSignal): Promise<RawAnswer>;
  /** The same session through another endpoint (another replica's `…/api/mcp-broker/mcp`). */
  at(mcpUrl: string): RawMcpSession;
  /** Ends the session (DELETE); the answer's body is read. */
  end(): Promise<Response>;
}

/** A session that exists already, used through `mcpUrl`. */
function rawSessionAt(mcpUrl: string, token: string, sessionId: string): RawMcpSession {
  let nextId = 1;
  const post = (body: unknown, signal?: AbortSignal) =>
    mcpRawPost(mcpUrl, token, body, { sessionId, protocolVersion: PROTOCOL_VERSION, signal });
  return {
    sessionId,
    post,
    async request(method, params, signal) {
      nextId += 1;
      const id = `${method}-${nextId}`;
      return readAnswer(await post({ jsonrpc: '2.0', id, method, params }, signal), id);
    },
    at: otherUrl => rawSessionAt(otherUrl, token, sessionId),
    async end() {
      const response = await fetch(mcpUrl, {
        method: 'DELETE',
        headers: {
          authorization: `Bearer ${token}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': PROTOCOL_VERSION,
        },
      });
      await response.arrayBuffer();
      return response;
    },
  };
}

/**
 * Initializes a session with raw HTTP (capabilities `{elicitation: {}}`) and sends
 * `notifications/initialized`; no GET stream is opened (the session idles between requests).
 */
export async function startRawMcpSession(mcpUrl: string, token: string): Promise<RawMcpSession> {
  const init = await mcpRawPost(
    mcpUrl,
    token,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: { elicitation: {} },
        clientInfo: { name: 'raw', version: '1' },
      },
    },
    { protocolVersion: PROTOCOL_VERSION },
  );
  const text = await init.text();
  const sessionId = init.headers.get('mcp-session-id');
  if (init.status !== 200 || sessionId === null) {
    throw new Error(`initialize answered ${init.status}: ${text}`);
  }
  const session = rawSessionAt(mcpUrl, token, sessionId);
  const initialized = await session.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await initialized.text();
  if (initialized.status !== 202) {
    throw new Error(`notifications/initialized answered ${initialized.status}`);
  }
  return session;
}
