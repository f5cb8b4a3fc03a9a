/*
 * StatelessCalls (a 2026-07-28 caller's calls) with a ToolCalls test double (what a backend
 * streams is scripted here; the forwarding itself is covered by the ToolCalls tests and
 * the e2e suites): which messages a 2026-07-28 client gets, and in which shape.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { ClientResponseWriter, ModernCaller, ModernToolCallContext } from '../types';
import { IdleBackendSessions } from './IdleBackendSessions';
import { RoutedCalls } from './RoutedCalls';
import { StatelessCalls } from './StatelessCalls';
import { channelsOf } from '../backend/testing/testBackends';
import type { ClientMessageSink } from './callTypes';
import type { CallClient, ForwardedToolCall } from './ToolCall';
import type { ToolCalls } from './ToolCalls';

const BACKEND_STREAM = [
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'i' } },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'e' } },
  { jsonrpc: '2.0', id: 7, result: { content: [] } },
];

async function callAs(
  caller: Partial<ModernCaller>,
  options: {
    /** What the backend sends (default BACKEND_STREAM). */
    backendStream?: Array<Record<string, unknown>>;
    request?: ModernToolCallContext['request'];
    shapeResult?: ModernToolCallContext['shapeResult'];
  } = {},
) {
  const forwarded: ForwardedToolCall[] = [];
  /** The client halves the handler asked for. */
  const clients: Array<Parameters<ToolCalls['statelessClient']>[0]> = [];
  const forwarder = {
    statelessClient: (parts: Parameters<ToolCalls['statelessClient']>[0]) => {
      clients.push(parts);
      return { owner: parts.owner, capabilities: parts.capabilities } as CallClient;
    },
    forward: async (call: ForwardedToolCall, sink: ClientMessageSink) => {
      forwarded.push(call);
      for (const message of options.backendStream ?? BACKEND_STREAM) sink.send(message);
      sink.end();
    },
  } as unknown as ToolCalls;
  const closeSessionsOf = async () => undefined;
  const logger = mockServices.logger.mock();
  const backendOf = (name: string) =>
    name === 'b' ? channelsOf({ name: 'b', url: 'http://b/mcp', headers: {} }) : undefined;
  const stateless = new StatelessCalls({
    calls: forwarder,
    routed: new RoutedCalls(forwarder, backendOf),
    statelessSessions: new IdleBackendSessions(closeSessionsOf, { idleMs: 60_000, logger }),
    backendOf,
  });
  /** Everything the client gets, in order. */
  const sent: Array<Record<string, any>> = [];
  /** How many messages came before the final response (any makes the answer a stream). */
  let streamed = 0;
  /** The final response, with the status it would have as plain JSON. */
  const finished: Array<{ body: Record<string, any>; httpStatus?: number }> = [];
  let ended = false;
  const response: ClientResponseWriter = {
    send: message => {
      streamed++;
      return sent.push(message as Record<string, any>) > 0;
    },
    finish: (message, httpStatus) => {
      sent.push(message as Record<string, any>);
      return finished.push({ body: message as Record<string, any>, httpStatus }) > 0;
    },
    end: () => {
      ended = true;
    },
    get answered() {
      return finished.length > 0 || ended;
    },
  };
  const context: ModernToolCallContext = {
    caller: {
      era: 'modern',
      principal: 'user:default/alice',
      protocolVersion: '2026-07-28',
      clientCapabilities: { elicitation: {} },
      poolKey: 'stateless:k',
      ...caller,
    },
    backend: { name: 'b', url: 'http://b/mcp', toolPrefix: 'b_', headers: {} },
    request: options.request ?? {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 't' },
    },
    response,
    signal: new AbortController().signal,
    ...(options.shapeResult === undefined ? {} : { shapeResult: options.shapeResult }),
  };
  await stateless.handle(context);
  return { sent, forwarded, clients, finished, streamed: () => streamed };
}

describe('StatelessCalls.handle (ToolCalls test double)', () => {
  it('passes progress, drops log messages without a logLevel and answers a complete result', async () => {
    const { sent, clients } = await callAs({});
    expect(sent.map(m => m.method ?? 'result')).toEqual(['notifications/progress', 'result']);
    expect(sent[1].result).toMatchObject({ resultType: 'complete', content: [] });
    expect(clients[0]).toMatchObject({
      owner: 'stateless:k',
      capabilities: { elicitation: {} },
    });
  });

  it('passes log messages of the requested level and above', async () => {
    const { sent } = await callAs({ logLevel: 'warning' });
    expect(sent.filter(m => m.method === 'notifications/message').map(m => m.params.level)).toEqual(
      ['error'],
    );
  });

  describe('the final response and what comes before it (the writer decides JSON or a stream)', () => {
    const progress = BACKEND_STREAM[0];

    it('gives a call whose only message is its result as the final response, HTTP 200', async () => {
      const { finished, streamed } = await callAs({}, { backendStream: [BACKEND_STREAM[3]] });
      expect(streamed()).toBe(0);
      expect(finished).toEqual([
        {
          body: {
            jsonrpc: '2.0',
            id: 7,
            result: expect.objectContaining({ resultType: 'complete' }),
          },
          httpStatus: 200,
        },
      ]);
    });

    it('gives the backend’s -32021 HTTP 400 with the JSON-RPC error, other errors 200', async () => {
      const missing = {
        code: -32021,
        message: 'needs sampling',
        data: { requiredCapabilities: {} },
      };
      const refused = await callAs(
        {},
        { backendStream: [{ jsonrpc: '2.0', id: 7, error: missing }] },
      );
      expect(refused.finished).toEqual([
        { body: { jsonrpc: '2.0', id: 7, error: missing }, httpStatus: 400 },
      ]);
      const failed = await callAs(
        {},
        { backendStream: [{ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'x' } }] },
      );
      expect(failed.finished.map(reply => reply.httpStatus)).toEqual([200]);
    });

    it('sends a progress notification before the final response', async () => {
      const { sent, streamed } = await callAs({}, { backendStream: [progress, BACKEND_STREAM[3]] });
      expect(streamed()).toBe(1);
      expect(sent.map(m => m.method ?? 'result')).toEqual(['notifications/progress', 'result']);
    });

    it('binds a resource read’s state to its URI and shapes its result as told', async () => {
      const { forwarded, clients, finished } = await callAs(
        {},
        {
          backendStream: [BACKEND_STREAM[3]],
          request: {
            jsonrpc: '2.0',
            id: 7,
            method: 'resources/read',
            params: { uri: 'file:///a' },
          },
          shapeResult: result => ({ ...result, ttlMs: 0 }),
        },
      );
      expect(forwarded[0]).toMatchObject({ method: 'resources/read' });
      expect(clients[0].caller.binding).toMatchObject({
        method: 'resources/read',
        name: 'b/file:///a',
      });
      expect(finished[0].body.result).toEqual({ content: [], ttlMs: 0 });
    });
  });
});
