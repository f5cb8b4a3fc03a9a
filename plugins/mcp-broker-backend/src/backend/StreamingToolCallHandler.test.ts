/*
 * StreamingToolCallHandler's stateless entry with a forwarder test double (what a backend
 * streams is scripted here; the forwarding itself is covered by the ToolCallForwarder tests and
 * the e2e suites): which messages a 2026-07-28 client gets, and in which shape.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { ClientEventStream, ModernCaller, ModernToolCallContext } from '../types';
import type { BackendSessionPool } from './BackendSessionPool';
import type { ElicitationIdMap } from './ElicitationIdMap';
import { IdleBackendSessions } from './IdleBackendSessions';
import { StreamingToolCallHandler } from './StreamingToolCallHandler';
import type { ClientMessageSink, ForwardedToolCall, ToolCallForwarder } from './ToolCallForwarder';

const BACKEND_STREAM = [
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'i' } },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'e' } },
  { jsonrpc: '2.0', id: 7, result: { content: [] } },
];

async function callAs(caller: Partial<ModernCaller>) {
  const forwarded: ForwardedToolCall[] = [];
  const forwarder = {
    forward: async (call: ForwardedToolCall, sink: ClientMessageSink) => {
      forwarded.push(call);
      for (const message of BACKEND_STREAM) sink.send(message);
      sink.end();
    },
  } as unknown as ToolCallForwarder;
  const pool = { closeClientSession: async () => undefined } as unknown as BackendSessionPool;
  const logger = mockServices.logger.mock();
  const handler = new StreamingToolCallHandler(
    forwarder,
    pool,
    {} as ElicitationIdMap,
    new IdleBackendSessions(pool, { idleMs: 60_000, logger }),
    logger,
  );
  const sent: Array<Record<string, any>> = [];
  const stream = {
    send: (message: unknown) => sent.push(message as Record<string, any>) > 0,
    close: () => undefined,
    closed: false,
    signal: new AbortController().signal,
  } as ClientEventStream;
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
    request: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't' } },
    reply: { json: () => undefined, answered: false },
    openEventStream: () => stream,
    signal: new AbortController().signal,
  };
  await handler.handleModernToolCall(context);
  return { sent, forwarded };
}

describe('StreamingToolCallHandler.handleModernToolCall (forwarder test double)', () => {
  it('passes progress, drops log messages without a logLevel and answers a complete result', async () => {
    const { sent, forwarded } = await callAs({});
    expect(sent.map(m => m.method ?? 'result')).toEqual(['notifications/progress', 'result']);
    expect(sent[1].result).toMatchObject({ resultType: 'complete', content: [] });
    expect(forwarded[0]).toMatchObject({
      clientSessionId: 'stateless:k',
      clientCapabilities: { elicitation: {} },
    });
    expect(forwarded[0].serverRequests).toBeDefined();
  });

  it('passes log messages of the requested level and above', async () => {
    const { sent } = await callAs({ logLevel: 'warning' });
    expect(sent.filter(m => m.method === 'notifications/message').map(m => m.params.level)).toEqual(
      ['error'],
    );
  });
});
