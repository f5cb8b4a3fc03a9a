/*
 * Relayed cancellations on SQLite and PostgreSQL (two connection pools on PostgreSQL, as two
 * processes would have): the store's record / poll / remove / sweep, then two CancellationRelays
 * ("replicas") on one database — a cancellation recorded on one reaches the call watched on the
 * other, only for the session that sent it, and a session deleted elsewhere ends its calls.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { Knex } from 'knex';
import { CancellationRelay, type RelayedCall } from '../backend/CancellationRelay';
import { waitFor } from '../testing/waitFor';
import { DatabaseCancellationStore, CANCELLATIONS_TABLE } from './DatabaseCancellationStore';
import { DatabaseClientSessionStore } from './DatabaseClientSessionStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('cancellation relay tests');
const NOW = 1_800_000_000_000;

describe.each(engines)('relayed cancellations on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  let counter = 0;
  /** A live session in the shared store (as `initialize` on some replica would leave it). */
  async function liveSession(expiresAt = Date.now() + 60_000): Promise<string> {
    counter += 1;
    const id = `session-${counter}-${Math.random().toString(36).slice(2)}`;
    await new DatabaseClientSessionStore(knexes[0]).insert({
      id,
      principal: 'user:default/alice',
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
      expiresAt,
    });
    return id;
  }

  describe('DatabaseCancellationStore', () => {
    it('hands a cancellation recorded on one replica to the other, with the live sessions', async () => {
      const [a, b] = knexes.map(knex => new DatabaseCancellationStore(knex));
      const [s1, s2] = [await liveSession(NOW + 60_000), await liveSession(NOW + 60_000)];
      await b.record({ sessionId: s1, requestKey: '"7"', reason: 'stop' }, NOW + 1_000);
      await b.record({ sessionId: s1, requestKey: '7' }, NOW + 1_000);
      await b.record({ sessionId: 'gone-session', requestKey: '7' }, NOW + 1_000);

      const found = await a.poll([s1, s2, 'gone-session'], NOW);
      expect(found.liveSessions).toEqual(new Set([s1, s2]));
      expect(found.cancellations).toEqual(
        expect.arrayContaining([
          { sessionId: s1, requestKey: '"7"', reason: 'stop' },
          { sessionId: s1, requestKey: '7' },
        ]),
      );
      expect(found.cancellations).toHaveLength(2);
      // Only the sessions asked about: another replica's sessions are not read.
      expect((await a.poll([s2], NOW)).cancellations).toEqual([]);

      await a.remove([{ sessionId: s1, requestKey: '"7"' }]);
      expect((await b.poll([s1], NOW)).cancellations).toEqual([{ sessionId: s1, requestKey: '7' }]);
    });

    it('never returns an expired cancellation or session, and sweeps expired rows', async () => {
      const store = new DatabaseCancellationStore(knexes[0]);
      const session = await liveSession(NOW + 5_000);
      await store.record({ sessionId: session, requestKey: '1' }, NOW + 1_000);
      await store.record({ sessionId: session, requestKey: '2' }, NOW + 9_000);
      expect((await store.poll([session], NOW + 1_000)).cancellations).toEqual([
        { sessionId: session, requestKey: '2' },
      ]);
      const afterSession = await store.poll([session], NOW + 5_000);
      expect(afterSession).toEqual({ liveSessions: new Set(), cancellations: [] });

      await store.deleteExpired(NOW + 1_000);
      const left = await knexes[1](CANCELLATIONS_TABLE)
        .where({ client_session_id: session })
        .select('request_key');
      expect(left).toEqual([{ request_key: '2' }]);
    });
  });

  describe('CancellationRelay across two replicas', () => {
    const relays: CancellationRelay[] = [];
    afterEach(() => relays.splice(0).forEach(relay => relay.stop()));
    function relayOn(knex: Knex): CancellationRelay {
      const relay = new CancellationRelay({
        store: new DatabaseCancellationStore(knex),
        logger: mockServices.logger.mock(),
        pollMs: 20,
      });
      relays.push(relay);
      return relay;
    }
    function call(sessionId: string, requestKey: string) {
      const events: string[] = [];
      const relayed: RelayedCall = {
        sessionId,
        requestKey,
        cancel: reason => events.push(`cancelled: ${reason}`),
        sessionEnded: () => events.push('session ended'),
      };
      return { relayed, events };
    }

    it('cancels the call of the session that sent the cancellation, once, and deletes the row', async () => {
      const [a, b] = [relayOn(knexes[0]), relayOn(knexes[1])];
      const [mine, other] = [await liveSession(), await liveSession()];
      const target = call(mine, '42');
      const sameIdOtherSession = call(other, '42');
      const sameSessionOtherId = call(mine, '"42"');
      const unwatch = [target, sameIdOtherSession, sameSessionOtherId].map(c => a.watch(c.relayed));

      await b.record(mine, 42, 'the user pressed stop');
      await waitFor(() => target.events.length > 0, 'the relayed cancellation');
      expect(target.events).toEqual(['cancelled: the user pressed stop']);
      await waitFor(
        async () =>
          (await knexes[0](CANCELLATIONS_TABLE).where({ client_session_id: mine })).length === 0,
        'the row to be deleted',
      );
      // Two more polls happen after the deletion: nothing else was cancelled, nothing twice.
      const polled = jest.spyOn(DatabaseCancellationStore.prototype, 'poll');
      await waitFor(() => polled.mock.calls.length >= 2, 'two more polls');
      polled.mockRestore();
      expect(target.events).toEqual(['cancelled: the user pressed stop']);
      expect(sameIdOtherSession.events).toEqual([]);
      expect(sameSessionOtherId.events).toEqual([]);
      unwatch.forEach(stop => stop());
    });

    it('reaches a call registered after the cancellation was recorded (the POSTs raced)', async () => {
      const [a, b] = [relayOn(knexes[0]), relayOn(knexes[1])];
      const session = await liveSession();
      await b.record(session, 'late');
      const late = call(session, '"late"');
      const unwatch = a.watch(late.relayed);
      await waitFor(() => late.events.length > 0, 'the relayed cancellation');
      expect(late.events).toEqual(['cancelled: undefined']);
      unwatch();
    });

    it('ends the calls of a session deleted on another replica', async () => {
      const a = relayOn(knexes[0]);
      const [deleted, kept] = [await liveSession(), await liveSession()];
      const ofDeleted = call(deleted, '1');
      const ofKept = call(kept, '1');
      const unwatch = [ofDeleted, ofKept].map(c => a.watch(c.relayed));
      await new DatabaseClientSessionStore(knexes[1]).delete(deleted);
      await waitFor(() => ofDeleted.events.length > 0, 'the session end');
      expect(ofDeleted.events).toEqual(['session ended']);
      expect(ofKept.events).toEqual([]);
      unwatch.forEach(stop => stop());
    });

    it('does not poll while no call is watched', async () => {
      const polled = jest.spyOn(DatabaseCancellationStore.prototype, 'poll');
      try {
        const a = relayOn(knexes[0]);
        const session = await liveSession();
        const watched = call(session, '1');
        a.watch(watched.relayed)();
        // A watched call on another relay proves time passed for polls that were due.
        const other = relayOn(knexes[0]);
        const unwatch = other.watch(call(session, '2').relayed);
        await waitFor(() => polled.mock.instances.length >= 2, 'polls of the other relay');
        unwatch();
        expect(new Set(polled.mock.instances)).toHaveProperty('size', 1);
      } finally {
        polled.mockRestore();
      }
    });
  });
});

describe('CancellationRelay with a failing store (test double: a store that always throws)', () => {
  it('logs a failed record without throwing, and a failing poll once, ending no call', async () => {
    const logger = mockServices.logger.mock();
    let polls = 0;
    const relay = new CancellationRelay({
      store: {
        record: async () => Promise.reject(new Error('database down')),
        poll: async () => {
          polls += 1;
          throw new Error('database down');
        },
        remove: async () => undefined,
        deleteExpired: async () => undefined,
      },
      logger,
      pollMs: 5,
    });
    try {
      await expect(relay.record('session', 1, 'stop')).resolves.toBeUndefined();
      const events: string[] = [];
      const unwatch = relay.watch({
        sessionId: 'session',
        requestKey: '1',
        cancel: () => events.push('cancelled'),
        sessionEnded: () => events.push('session ended'),
      });
      await waitFor(() => polls >= 3, 'three failed polls');
      unwatch();
      expect(events).toEqual([]);
      expect(logger.warn).toHaveBeenCalledTimes(2); // the record, and the first failed poll
    } finally {
      relay.stop();
    }
  });
});
