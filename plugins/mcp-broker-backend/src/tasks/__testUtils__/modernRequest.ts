import { mockCredentials } from '@backstage/backend-test-utils';
import { TASKS_EXTENSION } from '@internal/test-mcp-backends';
import { withModernEnvelope } from '../../backend/ModernChannel';

/** The client capabilities that declare the tasks extension. */
export const DECLARING_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

let nextId = 1;

/** The JSON-RPC message of an answer (plain JSON, or the last message of an SSE stream). */
export function messageOf(text: string): any {
  if (!text.trimStart().startsWith('{')) {
    const data = text
      .split('\n')
      .filter(line => line.startsWith('data: '))
      .map(line => line.slice('data: '.length));
    return data.length === 0 ? undefined : JSON.parse(data[data.length - 1]);
  }
  return JSON.parse(text);
}

/**
 * The headers and body of one 2026-07-28 request of `user`: the tasks extension declared unless
 * `capabilities` says otherwise, `Mcp-Name` only when `name` is given.
 */
export function modernRequestInit(
  user: string,
  method: string,
  params: Record<string, unknown>,
  id: number | string,
  capabilities: Record<string, unknown> = DECLARING_TASKS,
  name?: string,
): RequestInit {
  return {
    method: 'POST',
    headers: {
      Authorization: mockCredentials.user.header(`user:default/${user}`),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(name === undefined ? {} : { 'Mcp-Name': name }),
    },
    body: JSON.stringify(withModernEnvelope({ jsonrpc: '2.0', id, method, params }, capabilities)),
  };
}

/** How {@link modernRequest} sends. */
export interface ModernRequestOptions {
  /** The client capabilities of the envelope; the tasks extension declared when not given. */
  capabilities?: Record<string, unknown>;
  /** `Mcp-Name`: mirrors the tool name or task id when not given; null: absent. */
  name?: string | null;
  /** Where the answer's text goes too (a test file's scan for backend ids). */
  received?: string[];
}

/** The answer to a {@link modernRequest}. */
export interface ModernAnswer {
  status: number;
  retryAfter: string | null;
  text: string;
  /** The JSON-RPC message (see {@link messageOf}). */
  message: any;
}

/** One raw 2026-07-28 request of `user` to `url`. */
export async function modernRequest(
  url: URL,
  user: string,
  method: string,
  params: Record<string, unknown>,
  options: ModernRequestOptions = {},
): Promise<ModernAnswer> {
  const mirrored = method === 'tools/call' ? params.name : params.taskId;
  const name = options.name === undefined ? mirrored : options.name;
  const response = await fetch(
    url,
    modernRequestInit(
      user,
      method,
      params,
      nextId++,
      options.capabilities,
      typeof name === 'string' ? name : undefined,
    ),
  );
  const text = await response.text();
  options.received?.push(text);
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    text,
    message: messageOf(text),
  };
}
