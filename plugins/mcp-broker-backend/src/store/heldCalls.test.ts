/*
 * Held calls across replicas on SQLite and PostgreSQL (two connection pools on PostgreSQL, as
 * two processes would have): the store's claim, then two ToolCalls ("replicas") sharing the
 * database (held rounds and the bus between replicas) and the raw test backend — a retry landing
 * on the replica that does not hold the backend call resumes it, with the original ids reaching
 * the backend, and its client going away there cancels the call at the backend through the
 * holder.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { ElicitationIdMap } from '../calls/ElicitationIdMap';
import type { ForwardedToolCall } from '../calls/ToolCall';
import { ToolCalls } from '../calls/ToolCalls';
import { channelsOf } from '../backend/testing/testBackends';
import { collectingSink } from '../calls/testing/collectingSink';
import { waitFor } from '../testing/waitFor';
import { RequestStateSealer } from '../inputRequests/RequestStateSealer';
import { fixedHmacKeys } from '../inputRequests/requestStateKey';
import { DatabaseRequestStateNonceStore } from './DatabaseRequestStateNonceStore';
import { DatabaseHeldCallStore, HELD_CALLS_TABLE } from './DatabaseHeldCallStore';
import { DatabaseSignalStore, SIGNALS_TABLE } from './DatabaseSignalStore';
import { DatabaseReplicaPresenceStore } from './DatabaseReplicaPresenceStore';
import { SignalBus } from '../replicas/SignalBus';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

// Two replicas relaying through PostgreSQL: on a loaded machine a test takes longer than Jest's
// 5 s default (a full run saw one cancellation test pass its bound). The tests wait for events.
jest.setTimeout(30_000);

const { engines } = replicaDatabases('held call store tests');
const NOW = 1_800_000_000_000;

describe.each(engines)('held calls on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  describe('DatabaseHeldCallStore', () => {
    const round = (callId: string, n = 1) => ({
      callId,
      round: n,
      backend: 'raw',
      backendSessionId: 'session-1',
      protocolVersion: '2025-11-25',
      asked: [
        { key: 'elicitation-1', rawId: '7.0' },
        { key: 'roots-2', rawId: '"r"' },
      ],
      expiresAt: NOW + 60_000,
    });
    const claim = { clientRequestId: 'retry-1', answered: ['elicitation-1'] };

    it('lets exactly one of many concurrent claims of a round win, across replicas', async () => {
      const [a, b] = knexes.map(knex => new DatabaseHeldCallStore(knex));
      await a.publishRound(round('call-a'));
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? a : b).claimRound('call-a', claim, NOW, NOW + 120_000),
        ),
      );
      const won = claims.filter(c => c !== undefined);
      // The claimed round is kept until the claimer's deadline.
      expect(won).toEqual([{ ...round('call-a'), expiresAt: NOW + 120_000 }]);
      expect(await a.claimOf('call-a', 1)).toEqual(claim);
      // The next round replaces the claimed one, unclaimed.
      await a.publishRound(round('call-a', 2));
      expect(await a.claimOf('call-a', 2)).toBeUndefined();
      expect(await b.claimRound('call-a', claim, NOW, NOW + 1)).toMatchObject({ round: 2 });
    });

    it('refuses claims of unknown and expired rounds', async () => {
      const store = new DatabaseHeldCallStore(knexes[0]);
      expect(await store.claimRound('nope', claim, NOW, NOW + 1)).toBeUndefined();
      await store.publishRound({ ...round('call-old'), expiresAt: NOW - 1 });
      expect(await store.claimRound('call-old', claim, NOW, NOW + 1)).toBeUndefined();
    });

    it('hands an answer to the call only while its round is published, and deletes the call’s rows', async () => {
      const [holder, answering] = knexes.map(knex => new DatabaseHeldCallStore(knex));
      const signals = new DatabaseSignalStore(knexes[0]);
      expect(await answering.deliverAnswer('call-d', '{"id":"g"}', NOW, NOW + 1_000)).toBe(false);
      await holder.publishRound(round('call-d'));
      expect(await answering.deliverAnswer('call-d', '{"id":"g"}', NOW, NOW + 1_000)).toBe(true);
      expect(
        (await signals.read(['call:call-d'], NOW)).map(({ kind, payload }) => ({ kind, payload })),
      ).toEqual([{ kind: 'answer', payload: '{"id":"g"}' }]);
      await signals.send({ address: 'relay:call-d:1', kind: 'end' }, NOW + 1_000);
      await holder.deleteCall('call-d');
      expect(await signals.read(['call:call-d', 'relay:call-d:1'], NOW)).toEqual([]);
      expect(await answering.deliverAnswer('call-d', '{"id":"g"}', NOW, NOW + 1_000)).toBe(false);
    });

    it('refuses claims and answers for a round whose holder is gone, and says so', async () => {
      const presence = new DatabaseReplicaPresenceStore(knexes[0]);
      const holder = new DatabaseHeldCallStore(knexes[0], { replicaId: 'replica-holder' });
      const answering = new DatabaseHeldCallStore(knexes[1], { replicaId: 'replica-other' });
      await presence.beat('replica-holder', NOW + 10_000, NOW);
      await holder.publishRound(round('call-g'));
      await holder.publishRound(round('call-h'));
      // Present: the holder is not gone, answers are handed over, a claim wins.
      expect(await answering.holderGone('call-g', NOW + 9_999)).toBe(false);
      expect(await answering.deliverAnswer('call-g', '{"id":"g"}', NOW + 9_999, NOW + 20_000)).toBe(
        true,
      );
      expect(await answering.claimRound('call-h', claim, NOW + 9_999, NOW + 60_000)).toMatchObject({
        round: 1,
      });
      // Its mark lapsed (it died): nothing more reaches it, and a claim is refused as such.
      expect(await answering.holderGone('call-g', NOW + 10_000)).toBe(true);
      expect(
        await answering.deliverAnswer('call-g', '{"id":"g"}', NOW + 10_000, NOW + 20_000),
      ).toBe(false);
      expect(await answering.claimRound('call-g', claim, NOW + 10_000, NOW + 60_000)).toBe(
        'holder-gone',
      );
      // The round a claim already took is still the holder's; it, too, counts as gone now.
      expect(await answering.holderGone('call-h', NOW + 10_000)).toBe(true);
      // A round the holder ended is not "gone": it is no longer there.
      await holder.deleteCall('call-g');
      expect(await answering.holderGone('call-g', NOW + 10_000)).toBe(false);
      // A round of a replica of an earlier version (no presence id) never counts as gone.
      await new DatabaseHeldCallStore(knexes[0]).publishRound(round('call-old-version'));
      expect(await answering.holderGone('call-old-version', NOW + 10_000)).toBe(false);
      expect(
        await answering.claimRound('call-old-version', claim, NOW + 10_000, NOW + 60_000),
      ).toMatchObject({ round: 1 });
    });

    it('sweeps expired rounds only', async () => {
      const store = new DatabaseHeldCallStore(knexes[0]);
      await store.publishRound({ ...round('call-s1'), expiresAt: NOW - 5 });
      await store.publishRound({ ...round('call-s2'), expiresAt: NOW + 5 });
      await store.deleteExpired(NOW);
      const calls = await knexes[0](HELD_CALLS_TABLE).whereIn('call_id', ['call-s1', 'call-s2']);
      expect(calls.map(r => r.call_id)).toEqual(['call-s2']);
    });
  });

  describe('a retry on the replica that does not hold the call (raw backend)', () => {
    let backend: RawMcpBackend;
    let replicas: ToolCalls[];
    const KEY = Buffer.alloc(32, 9);

    beforeAll(async () => {
      backend = await startRawMcpBackend();
      replicas = knexes.map(knex => toolCallsOn(knex));
    });
    afterAll(async () => {
      await Promise.all(replicas?.map(r => r.close()) ?? []);
      await backend?.close();
    });

    /** A replica's ToolCalls on `knex`; `replicaId`: its presence id, recorded with its rounds. */
    function toolCallsOn(knex: (typeof knexes)[number], replicaId?: string): ToolCalls {
      const endpoint = { name: 'raw', url: backend.url, headers: {} };
      const logger = mockServices.logger.mock();
      const shared = {
        store: new DatabaseHeldCallStore(knex, { replicaId }),
        bus: new SignalBus({ store: new DatabaseSignalStore(knex), logger }),
      };
      return new ToolCalls({
        logger,
        elicitations: new ElicitationIdMap({ ttlMs: 60_000 }),
        backendOf: name => (name === 'raw' ? channelsOf(endpoint) : undefined),
        closeSessionsOf: async () => undefined,
        toolCallTimeoutMs: 10_000,
        requestTimeoutMs: 5_000,
        requestStates: new RequestStateSealer({
          keys: fixedHmacKeys(KEY),
          ttlMs: 60_000,
          nonces: new DatabaseRequestStateNonceStore(knex),
        }),
        shared,
      });
    }

    const binding = (args: Record<string, unknown>) => ({
      principal: 'user:default/alice',
      method: 'tools/call',
      name: 'raw_elicit',
      arguments: args,
    });
    /** A 2026-07-28 caller's call, its client half made by the replica that runs it. */
    const call = (replica: ToolCalls, args: Record<string, unknown>): ForwardedToolCall => ({
      client: replica.statelessClient({
        owner: 'pooled:alice',
        capabilities: { elicitation: {} },
        caller: { declaredCapabilities: { elicitation: {} }, binding: binding(args) },
      }),
      backend: channelsOf({ name: 'raw', url: backend.url, headers: {} }),
      clientRequestId: 1,
      params: { name: 'elicit', arguments: args, _meta: { progressToken: 'p-first' } },
    });

    it('resumes the call through the shared store: original ids, progress, next round, result', async () => {
      const args = { id: '7.0', alsoId: '"second"' };
      const first = collectingSink();
      await replicas[0].forward(call(replicas[0], args), first);
      const round1 = first.messages[0].result;
      expect(Object.keys(round1.inputRequests)).toEqual(['elicitation-1', 'elicitation-2']);

      // Only the first answered, on the other replica: the holder asks the second again.
      const second = collectingSink();
      await replicas[1].resume(
        {
          binding: binding(args),
          requestState: round1.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
          clientRequestId: 'retry-1',
          progressToken: 'p-retry-1',
        },
        second,
      );
      expect(second.ended).toBe(true);
      expect(second.messages).toEqual([
        {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 'p-retry-1', progress: 1, total: 2 },
        },
        expect.objectContaining({
          id: 'retry-1',
          result: expect.objectContaining({
            resultType: 'input_required',
            inputRequests: { 'elicitation-2': expect.anything() },
          }),
        }),
      ]);
      expect(backend.answers.map(a => [a.sentId, a.receivedId])).toEqual([['7.0', '7.0']]);

      // The next retry lands on the holder again: nothing goes through the database.
      const third = collectingSink();
      await replicas[0].resume(
        {
          binding: binding(args),
          requestState: second.messages[1].result.requestState,
          inputResponses: { 'elicitation-2': { action: 'decline' } },
          clientRequestId: 'retry-2',
        },
        third,
      );
      expect(third.messages.at(-1)).toMatchObject({
        id: 'retry-2',
        result: { structuredContent: { receivedId: '7.0', also: { receivedId: '"second"' } } },
      });
      expect(backend.answers.map(a => [a.sentId, a.receivedId, a.receivedType])).toEqual([
        ['7.0', '7.0', 'float'],
        ['"second"', '"second"', 'string'],
      ]);
    });

    it('refuses a retry of a call whose holder is gone, and nothing reaches the backend', async () => {
      // A holder that never marked itself present: to the others, it is gone (killed).
      const holder = toolCallsOn(knexes[0], `replica-dead-${Math.random()}`);
      try {
        const args = { id: '"holder-dead"' };
        const first = collectingSink();
        await holder.forward(call(holder, args), first);
        const before = backend.requests.length;
        await expect(
          replicas[1].resume(
            {
              binding: binding(args),
              requestState: first.messages[0].result.requestState,
              inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
              clientRequestId: 'retry-dead',
            },
            collectingSink(),
          ),
        ).rejects.toMatchObject({ reason: 'holder-gone' });
        expect(backend.requests.length).toBe(before);
      } finally {
        await holder.close();
      }
    });

    it('ends a relayed round with a retryable error once its holder is gone, not at the timeout', async () => {
      const replicaId = `replica-dying-${Math.random()}`;
      const presence = new DatabaseReplicaPresenceStore(knexes[0]);
      await presence.beat(replicaId, Date.now() + 60_000, Date.now());
      const holder = toolCallsOn(knexes[0], replicaId);
      try {
        const args = { id: '"holder-dies"', thenWaitForCancel: true };
        const first = collectingSink();
        await holder.forward(call(holder, args), first);
        const leg = collectingSink();
        const resumed = replicas[1].resume(
          {
            binding: binding(args),
            requestState: first.messages[0].result.requestState,
            inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
            clientRequestId: 'retry-lost',
            progressToken: 'p-lost',
          },
          leg,
        );
        // Claimed and answered while the holder was present: its relay came through.
        await leg.waitFor(m => m.method === 'notifications/progress');
        const diedAt = Date.now();
        await presence.leave(replicaId); // as if it died: its mark is gone
        await resumed;
        expect(leg.messages.at(-1)).toMatchObject({
          id: 'retry-lost',
          error: {
            code: -32000,
            data: { backend: 'raw', reason: 'replica-lost', retryable: true },
          },
        });
        // Within a presence check (2 s), far from the 10 s tool call timeout.
        expect(Date.now() - diedAt).toBeLessThan(8_000);
      } finally {
        await holder.close();
      }
    });

    /** The call ids of held calls with rows (rounds or signals) in the shared database. */
    const heldCallIds = async () => {
      const rounds = await knexes[0](HELD_CALLS_TABLE).distinct('call_id');
      const signals = await knexes[0](SIGNALS_TABLE).distinct('address');
      return new Set([
        ...rounds.map(row => String(row.call_id)),
        ...signals
          .map(row => /^(?:call|relay):([^:]+)/.exec(String(row.address))?.[1])
          .filter((id): id is string => id !== undefined),
      ]);
    };

    it.each([
      ['after the holder relayed its first message', false],
      ['before it was served', true],
    ])(
      'cancels the backend call when the client of a retry on the other replica goes away %s',
      async (_when, goneAtOnce) => {
        const args = { id: goneAtOnce ? '"gone-early"' : '"gone-later"', thenWaitForCancel: true };
        const rowsBefore = await heldCallIds();
        const first = collectingSink();
        await replicas[0].forward(call(replicas[0], args), first);
        const toolCall = backend.requests.filter(r => r.method === 'tools/call').at(-1)!;
        const [held] = [...(await heldCallIds())].filter(id => !rowsBefore.has(id));
        expect(held).toBeDefined();
        const retry = {
          binding: binding(args),
          requestState: first.messages[0].result.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
          clientRequestId: 'retry-cancelled',
          progressToken: 'p-cancelled',
        };
        const leg = collectingSink();
        if (goneAtOnce) leg.disconnect();
        const resumed = replicas[1].resume(retry, leg);
        if (!goneAtOnce) {
          // The holder took the claim over: the backend's progress after the answer came through.
          await leg.waitFor(m => m.method === 'notifications/progress');
          leg.disconnect();
        }
        await resumed;
        // The holder cancels as for a client of its own: notifications/cancelled with the
        // backend's id, on the call's backend session.
        const cancellations = () =>
          backend.cancellations.filter(
            c => c.sessionId === toolCall.sessionId && c.requestId === toolCall.id,
          );
        await waitFor(() => cancellations().length > 0, 'the cancellation at the backend');
        expect(cancellations()).toEqual([expect.objectContaining({ reason: expect.any(String) })]);
        expect(backend.answers.filter(a => a.sentId === args.id)).toHaveLength(1);
        await waitFor(() => replicas[0].inFlightCount() === 0, 'the held call to end');
        await waitFor(async () => !(await heldCallIds()).has(held), 'the call’s rows to go');
        expect(leg.messages.some(m => m.id === 'retry-cancelled')).toBe(false);
        // The state was used: a later retry is refused on either replica, reaching nothing.
        const before = backend.requests.length;
        for (const replica of replicas) {
          await expect(replica.resume(retry, collectingSink())).rejects.toMatchObject({
            reason: 'replayed',
          });
        }
        expect(backend.requests.length).toBe(before);
      },
    );

    it('refuses a replayed state on the other replica, and nothing reaches the backend', async () => {
      const args = { id: '31' };
      const first = collectingSink();
      await replicas[0].forward(call(replicas[0], args), first);
      const state = first.messages[0].result.requestState;
      const retry = {
        binding: binding(args),
        requestState: state,
        inputResponses: { 'elicitation-1': { action: 'decline' } },
        clientRequestId: 2,
      };
      const done = collectingSink();
      await replicas[1].resume(retry, done);
      expect(done.messages.at(-1)).toMatchObject({ id: 2, result: expect.anything() });
      const before = backend.requests.length;
      await expect(replicas[1].resume(retry, collectingSink())).rejects.toMatchObject({
        reason: 'replayed',
      });
      await expect(replicas[0].resume(retry, collectingSink())).rejects.toMatchObject({
        reason: 'replayed',
      });
      expect(backend.requests.length).toBe(before);
    });
  });
});
