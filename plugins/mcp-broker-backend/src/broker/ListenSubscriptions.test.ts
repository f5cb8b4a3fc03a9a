/*
 * The 2026-07-28 listen streams: the registry alone (client streams recorded in memory), and
 * fed by McpBroker's list_changed fan-out from a real (scripted) MCP server, beside a session
 * GET stream, so that both eras are shown to hear of the same change.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { readBrokerConfig } from '../config';
import { createStreamingToolCallHandler } from '../calls';
import type { ListKind } from '../protocol/listKinds';
import { ModernMetaKey } from '../protocol/modernEra';
import { recordingStream } from '../testing/recordingStream';
import { startScriptedMcpServer, ScriptedMcpServer } from '../testing/scriptedMcpServer';
import { waitFor } from '../testing/waitFor';
import { ListenSubscriptions, type ListenSubscription } from './ListenSubscriptions';
import { McpBroker } from './McpBroker';

const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';

function grant(...kinds: Array<Exclude<ListKind, 'roots'>>) {
  const member = { tools: 'toolsListChanged', prompts: 'promptsListChanged' } as const;
  const filter: Record<string, boolean> = {};
  for (const kind of kinds) {
    filter[kind === 'resources' ? 'resourcesListChanged' : member[kind]] = true;
  }
  return { filter, kinds: new Set<ListKind>(kinds) };
}

function openOn(
  registry: ListenSubscriptions,
  principal: string,
  subscriptionId: string | number,
  honoured = grant('tools'),
  viewer?: string,
) {
  const stream = recordingStream();
  const opened = registry.open({
    principal,
    subscriptionId,
    honoured,
    openStream: () => stream,
    ...(viewer === undefined ? {} : { viewer }),
  });
  return { opened, stream };
}

const methods = (stream: ReturnType<typeof recordingStream>) =>
  stream.messages.map(message => ('method' in message ? message.method : 'result'));

describe('ListenSubscriptions (client streams recorded in memory)', () => {
  it('acknowledges first, then tags each granted list_changed with the listen request id', () => {
    const registry = new ListenSubscriptions({ perPrincipal: 5, perReplica: 5 });
    const { opened, stream } = openOn(registry, ALICE, 'listen:1', grant('tools', 'prompts'));
    expect((opened as ListenSubscription).key).toMatch(/^[A-Za-z0-9_-]{22}$/);
    registry.notify('prompts');
    registry.notify('tools');
    expect(stream.messages).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          _meta: { [ModernMetaKey.subscriptionId]: 'listen:1' },
          notifications: { toolsListChanged: true, promptsListChanged: true },
        },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/prompts/list_changed',
        params: { _meta: { [ModernMetaKey.subscriptionId]: 'listen:1' } },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { [ModernMetaKey.subscriptionId]: 'listen:1' } },
      },
    ]);
  });

  it('sends each stream only the kinds it was granted, and never roots', () => {
    const registry = new ListenSubscriptions({ perPrincipal: 5, perReplica: 5 });
    const tools = openOn(registry, ALICE, 1, grant('tools')).stream;
    const prompts = openOn(registry, ALICE, 2, grant('prompts')).stream;
    registry.notify('tools');
    registry.notify('resources');
    registry.notify('roots');
    expect(methods(tools)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tools/list_changed',
    ]);
    expect(methods(prompts)).toEqual(['notifications/subscriptions/acknowledged']);
  });

  it('ends every stream with the complete result for its id, then refuses new ones', () => {
    const registry = new ListenSubscriptions({ perPrincipal: 5, perReplica: 5 });
    const first = openOn(registry, ALICE, 7).stream;
    const second = openOn(registry, BOB, 'b').stream;
    registry.closeAll();
    for (const [stream, id] of [
      [first, 7],
      [second, 'b'],
    ] as const) {
      expect(stream.closed).toBe(true);
      expect(stream.messages.at(-1)).toEqual({
        jsonrpc: '2.0',
        id,
        result: {
          resultType: 'complete',
          _meta: expect.objectContaining({ [ModernMetaKey.subscriptionId]: id }),
        },
      });
    }
    expect(registry.size).toBe(0);
    const late = openOn(registry, ALICE, 8);
    expect(late.opened).toMatchObject({ refused: 'shutting-down' });
    expect(late.stream.messages).toEqual([]);
  });

  it('ends only the streams of the viewers asked for, gracefully, and still takes new ones', () => {
    const registry = new ListenSubscriptions({ perPrincipal: 5, perReplica: 5 });
    const gone = openOn(registry, ALICE, 1, grant('tools'), 'alice\nremoved').stream;
    const kept = openOn(registry, ALICE, 2, grant('tools'), 'alice').stream;
    registry.closeWhere(viewer => viewer === 'alice\nremoved');
    expect(gone.closed).toBe(true);
    expect(gone.messages.at(-1)).toMatchObject({ id: 1, result: { resultType: 'complete' } });
    expect(kept.closed).toBe(false);
    expect(registry.size).toBe(1);
    expect(openOn(registry, ALICE, 3).opened).not.toHaveProperty('refused');
  });

  it('counts streams per principal and per replica, and frees a slot when a stream closes', () => {
    const registry = new ListenSubscriptions({ perPrincipal: 2, perReplica: 3 });
    const a1 = openOn(registry, ALICE, 1).stream;
    openOn(registry, ALICE, 2);
    const refusedAlice = openOn(registry, ALICE, 3);
    expect(refusedAlice.opened).toMatchObject({ refused: 'perPrincipal' });
    expect((refusedAlice.opened as { message: string }).message).toContain(
      'mcpBroker.sessionLimits.perPrincipal',
    );
    // Nothing was opened for a refused stream.
    expect(refusedAlice.stream.messages).toEqual([]);
    openOn(registry, BOB, 1);
    expect(openOn(registry, BOB, 2).opened).toMatchObject({ refused: 'perReplica' });
    a1.close();
    expect(registry.countOf(ALICE)).toBe(1);
    expect(openOn(registry, ALICE, 4).opened).toHaveProperty('key');
  });

  it('forgets a stream that closed (client gone or too slow) and sends it nothing more', () => {
    const registry = new ListenSubscriptions({ perPrincipal: 5, perReplica: 5 });
    const gone = openOn(registry, ALICE, 1).stream;
    const staying = openOn(registry, ALICE, 2).stream;
    gone.close();
    registry.notify('tools');
    expect(registry.size).toBe(1);
    expect(methods(gone)).toEqual(['notifications/subscriptions/acknowledged']);
    expect(methods(staying)).toHaveLength(2);
  });
});

describe('listen streams fed by McpBroker’s fan-out (a real scripted MCP server)', () => {
  let scripted: ScriptedMcpServer;
  let broker: McpBroker;

  beforeEach(async () => {
    scripted = await startScriptedMcpServer({
      tools: ['one'],
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } },
    });
    broker = McpBroker.create({
      config: readBrokerConfig(
        new ConfigReader({
          mcpBroker: {
            servers: [{ name: 'scripted', url: scripted.url }],
            coalesceWindow: { milliseconds: 0 },
          },
        }),
      ),
      logger: mockServices.logger.mock(),
      toolCallHandlerFactory: deps => createStreamingToolCallHandler(deps),
    });
    await waitFor(() => broker.status().backends[0].eventStream === 'open');
  });

  afterEach(async () => {
    await broker.close();
    await scripted.close();
  });

  function listen(id: number, honoured: ReturnType<typeof grant>) {
    const stream = recordingStream();
    broker.listenStreams.open({
      principal: ALICE,
      subscriptionId: id,
      honoured,
      openStream: () => broker.openEventStream(() => stream),
    });
    return stream;
  }

  it('delivers a backend’s list_changed to session GET streams and listen streams alike', async () => {
    const session = await broker.sessions.create({
      principal: ALICE,
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
    });
    const legacy = recordingStream();
    session.eventStream = legacy;
    const tools = listen(1, grant('tools'));
    const prompts = listen(2, grant('prompts'));
    expect(broker.status().clients.listenStreams).toBe(2);
    scripted.sendListChanged('tools');
    await waitFor(() => methods(tools).includes('notifications/tools/list_changed'));
    expect(methods(legacy)).toContain('notifications/tools/list_changed');
    // The prompts stream is proven to have missed the tools change by a later prompts change.
    scripted.sendListChanged('prompts');
    await waitFor(() => methods(prompts).includes('notifications/prompts/list_changed'));
    expect(methods(prompts)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/prompts/list_changed',
    ]);
  });

  it('ends listen streams with the complete result as soon as the drain begins', async () => {
    const stream = listen(3, grant('tools'));
    const drained = broker.drain();
    expect(stream.closed).toBe(true);
    expect(stream.messages.at(-1)).toMatchObject({ id: 3, result: { resultType: 'complete' } });
    await drained;
    expect(broker.status().clients.listenStreams).toBe(0);
  });
});
