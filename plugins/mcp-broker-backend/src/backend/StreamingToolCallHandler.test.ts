/*
 * StreamingToolCallHandler's stateless entry with a forwarder test double (what a backend
 * streams is scripted here; the forwarding itself is covered by the ToolCallForwarder tests and
 * the e2e suites): which messages a 2026-07-28 client gets, and in which shape.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { ClientEventStream, ModernCaller, ModernToolCallContext } from '../types';
import type { ElicitationIdMap } from './ElicitationIdMap';
import { IdleBackendSessions } from './IdleBackendSessions';
import { StreamingToolCallHandler } from './StreamingToolCallHandler';
import { channelsOf } from './testing/testBackends';
import type { ClientMessageSink, ForwardedToolCall, ToolCallForwarder } from './ToolCallForwarder';

const BACKEND_STREAM = [
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'i' } },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'e' } },
  { jsonrpc: '2.0', id: 7, result: { content: [] } },
];

async function callAs(
  caller: Partial<ModernCaller>,
  options: {
    /** What the backend sends (default BACKEND_STREAM), after `before` resolves. */
    backendStream?: Array<Record<string, unknown>>;
    before?: (streamOpened: Promise<void>) => Promise<void>;
    /** The forwarder double's `acceptsInputRequired` (a requestState sealer configured). */
    acceptsInputRequired?: boolean;
    request?: ModernToolCallContext['request'];
    shapeResult?: ModernToolCallContext['shapeResult'];
    keepAliveMs?: number;
  } = {},
) {
  const forwarded: ForwardedToolCall[] = [];
  let streamOpened = () => {};
  const opened = new Promise<void>(resolve => (streamOpened = resolve));
  const forwarder = {
    acceptsInputRequired: options.acceptsInputRequired ?? false,
    forward: async (call: ForwardedToolCall, sink: ClientMessageSink) => {
      forwarded.push(call);
      await options.before?.(opened);
      for (const message of options.backendStream ?? BACKEND_STREAM) sink.send(message);
      sink.end();
    },
  } as unknown as ToolCallForwarder;
  const closeSessionsOf = async () => undefined;
  const logger = mockServices.logger.mock();
  const handler = new StreamingToolCallHandler(
    forwarder,
    {} as ElicitationIdMap,
    new IdleBackendSessions(closeSessionsOf, { idleMs: 60_000, logger }),
    logger,
    name =>
      name === 'b' ? channelsOf({ name: 'b', url: 'http://b/mcp', headers: {} }) : undefined,
    closeSessionsOf,
    options.keepAliveMs,
  );
  const sent: Array<Record<string, any>> = [];
  const replies: Array<{ body: Record<string, any>; httpStatus?: number }> = [];
  let streamsOpened = 0;
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
    request: options.request ?? {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 't' },
    },
    reply: {
      json: (body, httpStatus) => replies.push({ body: body as Record<string, any>, httpStatus }),
      answered: false,
    },
    openEventStream: () => {
      streamsOpened++;
      streamOpened();
      return stream;
    },
    signal: new AbortController().signal,
    ...(options.shapeResult === undefined ? {} : { shapeResult: options.shapeResult }),
  };
  await handler.handleModernToolCall(context);
  return { sent, forwarded, replies, streamsOpened: () => streamsOpened };
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

  describe('the response opens as a stream only when something is streamed', () => {
    const progress = BACKEND_STREAM[0];

    it('answers a call whose only message is its result as plain JSON (HTTP 200)', async () => {
      const { replies, streamsOpened } = await callAs({}, { backendStream: [BACKEND_STREAM[3]] });
      expect(streamsOpened()).toBe(0);
      expect(replies).toEqual([
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

    it('answers the backend’s -32021 as HTTP 400 with the JSON-RPC error, other errors 200', async () => {
      const missing = {
        code: -32021,
        message: 'needs sampling',
        data: { requiredCapabilities: {} },
      };
      const refused = await callAs(
        {},
        { backendStream: [{ jsonrpc: '2.0', id: 7, error: missing }] },
      );
      expect(refused.replies).toEqual([
        { body: { jsonrpc: '2.0', id: 7, error: missing }, httpStatus: 400 },
      ]);
      const failed = await callAs(
        {},
        { backendStream: [{ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'x' } }] },
      );
      expect(failed.replies.map(reply => reply.httpStatus)).toEqual([200]);
    });

    it('streams once a progress notification comes, the result on the stream', async () => {
      const { replies, sent, streamsOpened } = await callAs(
        {},
        { backendStream: [progress, BACKEND_STREAM[3]] },
      );
      expect(streamsOpened()).toBe(1);
      expect(replies).toEqual([]);
      expect(sent.map(m => m.method ?? 'result')).toEqual(['notifications/progress', 'result']);
    });

    it('opens the stream of a silent call after the keep-alive interval (keep-alives are due)', async () => {
      const { replies, sent, streamsOpened } = await callAs(
        {},
        { keepAliveMs: 10, backendStream: [BACKEND_STREAM[3]], before: opened => opened },
      );
      expect(streamsOpened()).toBe(1);
      expect(replies).toEqual([]);
      expect(sent.map(m => m.id)).toEqual([7]);
    });

    it('binds a resource read’s state to its URI and shapes its result as told', async () => {
      const { forwarded, replies } = await callAs(
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
          acceptsInputRequired: true,
        },
      );
      expect(forwarded[0]).toMatchObject({ method: 'resources/read' });
      expect(forwarded[0].inputRequired?.binding).toMatchObject({
        method: 'resources/read',
        name: 'b/file:///a',
      });
      expect(replies[0].body.result).toEqual({ content: [], ttlMs: 0 });
    });
  });
});
