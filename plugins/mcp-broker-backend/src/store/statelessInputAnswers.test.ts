/*
 * A 2025 client's answer to a 2026-07-28 backend's input request, given on another replica than
 * the one whose call waits for it, on SQLite and PostgreSQL (two connection pools on PostgreSQL,
 * as two processes would have): the store's hand-over, then two ToolCalls ("replicas") sharing
 * the database (held rounds and the bus between replicas) in front of the repository's modern
 * example server (modern-only).
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ModernExampleMcpServer, startModernExampleMcpServer } from '@internal/example-mcp-server';
import knexFactory, { type Knex } from 'knex';
import { ElicitationIdMap, ElicitationMapping } from '../calls/ElicitationIdMap';
import { StatelessInputAnswers } from '../calls/StatelessInputAnswers';
import type { ForwardedToolCall } from '../calls/ToolCall';
import { ToolCalls } from '../calls/ToolCalls';
import type { BackendEndpoint } from '../backend/backendTransport';
import { channelsOf } from '../backend/testing/testBackends';
import { collectingSink } from '../calls/testing/collectingSink';
import { DatabaseElicitationIdStore } from './DatabaseElicitationIdStore';
import { DatabaseHeldCallStore, HELD_CALLS_TABLE } from './DatabaseHeldCallStore';
import { DatabaseSignalStore, SIGNALS_TABLE } from './DatabaseSignalStore';
import { callAddress, SignalBus } from '../replicas/SignalBus';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('stateless input answer tests');
const NOW = 1_800_000_000_000;

describe.each(engines)('answers to a 2026-07-28 backend’s inputs on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  const rowsOf = async (callId: string) => ({
    rounds: (await knexes[0](HELD_CALLS_TABLE).where({ call_id: callId })).length,
    signals: (await knexes[0](SIGNALS_TABLE).where({ address: callAddress(callId) })).length,
  });
  const buses: SignalBus[] = [];
  afterAll(() => buses.splice(0).forEach(bus => bus.stop()));
  /** What a replica on `knex` shares with the others. */
  const sharedOn = (knex: Knex) => {
    const bus = new SignalBus({
      store: new DatabaseSignalStore(knex),
      logger: mockServices.logger.mock(),
    });
    buses.push(bus);
    return { store: new DatabaseHeldCallStore(knex), bus };
  };

  describe('DatabaseHeldCallStore.deliverAnswer', () => {
    const round = (callId: string, expiresAt = NOW + 60_000) => ({
      callId,
      round: 3,
      backend: 'modern',
      protocolVersion: '2026-07-28',
      asked: [{ key: 'modern:abc', rawId: '"confirm"' }],
      expiresAt,
    });

    it('hands an answer over only while the call’s round is published and unexpired', async () => {
      const [a, b] = knexes.map(knex => new DatabaseHeldCallStore(knex));
      expect(await b.deliverAnswer('call-none', '{"n":0}', NOW, NOW + 1_000)).toBe(false);
      await a.publishRound(round('call-old', NOW));
      expect(await b.deliverAnswer('call-old', '{"n":0}', NOW, NOW + 1_000)).toBe(false);

      await a.publishRound(round('call-live'));
      expect(await b.deliverAnswer('call-live', '{"n":1}', NOW, NOW + 1_000)).toBe(true);
      // As a signal to the call, which the holder waits for.
      const signals = await new DatabaseSignalStore(knexes[0]).read(
        [callAddress('call-live')],
        NOW,
      );
      expect(signals.map(({ kind, payload }) => ({ kind, payload }))).toEqual([
        { kind: 'answer', payload: '{"n":1}' },
      ]);
      expect(await rowsOf('call-old')).toEqual({ rounds: 1, signals: 0 });
    });

    it('hands nothing over once the call ended, and leaves no rows behind', async () => {
      const [a, b] = knexes.map(knex => new DatabaseHeldCallStore(knex));
      await a.publishRound(round('call-ended'));
      expect(await b.deliverAnswer('call-ended', '{"n":1}', NOW, NOW + 1_000)).toBe(true);
      await a.deleteCall('call-ended');
      expect(await rowsOf('call-ended')).toEqual({ rounds: 0, signals: 0 });
      expect(await b.deliverAnswer('call-ended', '{"n":2}', NOW, NOW + 1_000)).toBe(false);
      expect(await rowsOf('call-ended')).toEqual({ rounds: 0, signals: 0 });
    });
  });

  describe('StatelessInputAnswers on two replicas', () => {
    const answersOn = (knex: Knex) =>
      new StatelessInputAnswers({
        logger: mockServices.logger.mock(),
        shared: sharedOn(knex),
        answerTtlMs: 60_000,
      });
    const mapping = (callId: string, n: number): ElicitationMapping => ({
      gatewayId: `modern:gateway-id-${callId}-${n}-xxxxxxxxxx`,
      backendRequestId: JSON.stringify(`input-${n}`),
      backend: 'modern',
      backendSessionId: undefined,
      protocolVersion: '2026-07-28',
      clientSessionId: 'client-a',
      callId,
      expiresAt: Date.now() + 60_000,
    });

    it('takes only its own round’s ids from its signals; after the call, answers find it ended', async () => {
      const [holder, other] = knexes.map(answersOn);
      const asked = [mapping('call-r', 1), mapping('call-r', 2)];
      const round = await holder.open('call-r', 1, asked);
      const neighbour = mapping('call-s', 1);
      const neighbourRound = await holder.open('call-s', 1, [neighbour]);
      // A signal to call-r naming an id of another call waiting on the same replica must not
      // reach that call.
      expect(
        await other.deliver({ ...neighbour, callId: 'call-r' }, { id: 'x', result: { forged: 1 } }),
      ).toBe('delivered');
      expect(await other.deliver(asked[1], { id: asked[1].gatewayId, result: { n: 2 } })).toBe(
        'delivered',
      );
      // On the holder itself the waiter takes it at once, without the store.
      expect(await holder.deliver(asked[0], { id: asked[0].gatewayId, result: { n: 1 } })).toBe(
        'delivered',
      );
      // The signals are read in order: once n: 2 arrived, the forged one was read before it.
      await expect(Promise.all(asked.map(m => round.answerTo(m.gatewayId)))).resolves.toEqual([
        { id: asked[0].gatewayId, result: { n: 1 } },
        { jsonrpc: '2.0', id: asked[1].gatewayId, result: { n: 2 } },
      ]);
      expect(await other.deliver(neighbour, { id: neighbour.gatewayId, result: { real: 1 } })).toBe(
        'delivered',
      );
      await expect(neighbourRound.answerTo(neighbour.gatewayId)).resolves.toMatchObject({
        result: { real: 1 },
      });
      for (const r of [round, neighbourRound]) r.close();
      await holder.callEnded('call-r');
      await holder.callEnded('call-s');
      expect(await rowsOf('call-r')).toEqual({ rounds: 0, signals: 0 });
      expect(await rowsOf('call-s')).toEqual({ rounds: 0, signals: 0 });
      expect(await other.deliver(mapping('call-r', 3), { id: 'y', result: {} })).toBe('call-ended');
    });

    it('publishes nothing and polls nothing without a shared store (one replica)', async () => {
      const single = new StatelessInputAnswers({
        logger: mockServices.logger.mock(),
        answerTtlMs: 60_000,
      });
      const asked = mapping('call-mem', 1);
      const round = await single.open('call-mem', 1, [asked]);
      expect(await rowsOf('call-mem')).toEqual({ rounds: 0, signals: 0 });
      expect(await single.deliver(asked, { id: asked.gatewayId, result: { ok: true } })).toBe(
        'delivered',
      );
      await expect(round.answerTo(asked.gatewayId)).resolves.toMatchObject({
        result: { ok: true },
      });
      round.close();
      expect(await single.deliver(asked, { id: asked.gatewayId, result: {} })).toBe('call-ended');
    });
  });

  describe('a legacy client’s answer on the replica that does not hold the call (modern backend)', () => {
    let server: ModernExampleMcpServer;
    let endpoint: BackendEndpoint;
    const replicas: ToolCalls[] = [];

    function replica(knex: Knex, heldCallsKnex = knex) {
      const logger = mockServices.logger.mock();
      const calls = new ToolCalls({
        logger,
        elicitations: new ElicitationIdMap({
          store: new DatabaseElicitationIdStore(knex),
          ttlMs: 60_000,
        }),
        backendOf: name => (name === endpoint.name ? channelsOf(endpoint) : undefined),
        closeSessionsOf: async () => undefined,
        toolCallTimeoutMs: 20_000,
        requestTimeoutMs: 5_000,
        shared: sharedOn(heldCallsKnex),
      });
      replicas.push(calls);
      return calls;
    }

    beforeAll(async () => {
      server = await startModernExampleMcpServer({ port: 0, legacy: 'reject' });
      endpoint = { name: 'modern', url: server.url, headers: {} };
    });
    afterAll(async () => {
      await Promise.all(replicas.map(r => r.close()));
      await server?.close();
    });

    const confirmCall = (calls: ToolCalls, message: string): ForwardedToolCall => ({
      client: calls.sessionClient('client-a', { elicitation: {} }),
      backend: channelsOf(endpoint),
      clientRequestId: 1,
      params: { name: 'confirm', arguments: { message } },
      backendEra: 'modern',
    });

    it('resumes the call with the answer; a second answer on either replica is refused', async () => {
      const [a, b] = knexes.map(knex => replica(knex));
      const sink = collectingSink();
      const done = a.forward(confirmCall(a, 'Deploy?'), sink);
      const asked = await sink.waitFor(m => m.method === 'elicitation/create');
      expect(asked.params).toMatchObject({ message: 'Deploy?' });
      const answer = { id: asked.id, result: { action: 'accept', content: { confirmed: true } } };
      // Another session cannot answer it, on any replica; the id stays answerable.
      expect(await b.answer('client-b', answer)).toMatchObject({ outcome: 'unknown-id' });
      expect(await b.answer('client-a', answer)).toEqual({ outcome: 'delivered' });
      for (const again of [b, a]) {
        expect(await again.answer('client-a', answer)).toMatchObject({
          outcome: 'unknown-id',
          error: { message: expect.stringContaining('already answered') },
        });
      }
      await done;
      expect(sink.messages.at(-1)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: expect.objectContaining({ content: [{ type: 'text', text: 'confirmed: true' }] }),
      });
      // The call's round and signals went with it (the store tests above left theirs).
      expect(await knexes[0](HELD_CALLS_TABLE).whereNot('call_id', 'like', 'call-%')).toEqual([]);
      expect(await knexes[0](SIGNALS_TABLE).whereNot('address', 'like', 'call:call-%')).toEqual([]);
    });

    it('gives the id back when the hand-over fails, so that the answer can be sent again', async () => {
      const broken = knexFactory(knexes[0].client.config);
      await broken.destroy();
      const a = replica(knexes[0]);
      const b = replica(knexes[1], broken);
      const sink = collectingSink();
      const done = a.forward(confirmCall(a, 'Really?'), sink);
      const asked = await sink.waitFor(m => m.method === 'elicitation/create');
      const answer = { id: asked.id, result: { action: 'decline' } };
      await expect(b.answer('client-a', answer)).rejects.toThrow();
      expect(await a.answer('client-a', answer)).toEqual({ outcome: 'delivered' });
      await done;
      expect(sink.messages.at(-1)).toMatchObject({
        id: 1,
        result: { content: [{ type: 'text', text: 'not confirmed (decline)' }] },
      });
    });
  });
});
