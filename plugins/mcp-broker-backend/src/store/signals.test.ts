/*
 * The bus between replicas on SQLite and PostgreSQL (two connection pools on PostgreSQL, as two
 * processes would have): the store's send / read / remove / sweep and its bound per address,
 * then two SignalBuses ("replicas") on one database carrying a 2025 client's cancellations and
 * its session's end (SessionCancellations) from the replica that got them to the calls running
 * on the other — only for the session that sent them, once, and only while something waits.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { Knex } from 'knex';
import { channelsOf } from '../backend/testing/testBackends';
import { ElicitationIdMap } from '../calls/ElicitationIdMap';
import { LegacyLeg } from '../calls/LegacyLeg';
import { SessionCancellations } from '../calls/SessionCancellations';
import { ToolCall } from '../calls/ToolCall';
import { ToolCalls } from '../calls/ToolCalls';
import { SignalBus, sessionAddress, type SignalStore } from '../replicas/SignalBus';
import { waitFor } from '../testing/waitFor';
import { DatabaseSignalStore, SIGNALS_TABLE } from './DatabaseSignalStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('replica signal tests');
const NOW = 1_800_000_000_000;

/** How many connections to this database wait for a PostgreSQL advisory lock. */
async function advisoryLockWaiters(knex: Knex): Promise<number> {
  const result = await knex.raw(
    `select count(*) as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory'`,
  );
  return Number(result.rows[0].n);
}

/** Where the calls of {@link sessionCall} get their two halves (nothing of theirs runs). */
const halves = (() => {
  const logger = mockServices.logger.mock();
  const calls = new ToolCalls({
    logger,
    elicitations: new ElicitationIdMap({ ttlMs: 60_000 }),
    backendOf: () => undefined,
    closeSessionsOf: async () => undefined,
    toolCallTimeoutMs: 60_000,
    requestTimeoutMs: 5_000,
  });
  return { calls, leg: new LegacyLeg({ logger, requestTimeoutMs: 5_000 }) };
})();

/** A call of `sessionId` with client request id `requestId`, recording how it ends. */
function sessionCall(sessionId: string, requestId: string | number) {
  const call = new ToolCall(
    {
      client: halves.calls.sessionClient(sessionId, {}),
      backend: channelsOf({ name: 'b', url: 'http://127.0.0.1:9/mcp', headers: {} }),
      clientRequestId: requestId,
      params: { name: 't' },
    },
    halves.leg,
    60_000,
  );
  const told: string[] = [];
  // As if its request had gone out: the backend would be told why the call ended.
  const session = { protocolVersion: '2025-11-25' };
  call.sentOn({ channel: call.request.backend.legacy, session }, async reason => {
    told.push(reason);
  });
  return { call, told, requestKey: JSON.stringify(requestId) };
}

describe.each(engines)('signals between replicas on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  describe('DatabaseSignalStore', () => {
    it('hands the signals sent on one replica to the other in order, only for the addresses asked', async () => {
      const [a, b] = knexes.map(knex => new DatabaseSignalStore(knex));
      await b.send({ address: 'call:x1', kind: 'message', payload: '{"n":1}' }, NOW + 1_000);
      await b.send({ address: 'call:x2', kind: 'cancel' }, NOW + 1_000);
      await b.send({ address: 'call:x1', kind: 'end' }, NOW + 1_000);
      const read = await a.read(['call:x1', 'call:nobody'], NOW);
      expect(read.map(({ seq: _seq, ...signal }) => signal)).toEqual([
        { address: 'call:x1', kind: 'message', payload: '{"n":1}' },
        { address: 'call:x1', kind: 'end' },
      ]);
      expect(read[0].seq).toBeLessThan(read[1].seq);
      await a.remove([read[0].seq]);
      expect((await b.read(['call:x1'], NOW)).map(s => s.kind)).toEqual(['end']);
    });

    it('never returns an expired signal, and sweeps expired rows only', async () => {
      const store = new DatabaseSignalStore(knexes[0]);
      await store.send({ address: 'call:e', kind: 'cancel', payload: 'old' }, NOW + 1_000);
      await store.send({ address: 'call:e', kind: 'cancel', payload: 'new' }, NOW + 9_000);
      expect((await store.read(['call:e'], NOW + 1_000)).map(s => s.payload)).toEqual(['new']);
      await store.deleteExpired(NOW + 1_000);
      const left = await knexes[1](SIGNALS_TABLE).where({ address: 'call:e' }).select('payload');
      expect(left).toEqual([{ payload: 'new' }]);
    });

    it('keeps at most the bound of unexpired signals per address, across replicas', async () => {
      const [a, b] = knexes.map(knex => new DatabaseSignalStore(knex));
      const address = sessionAddress('flooding-session');
      await a.send({ address, kind: 'cancel', payload: 'expired' }, NOW - 1);
      const sent = [];
      for (let i = 0; i < 6; i += 1) {
        const store = i % 2 ? a : b;
        sent.push(await store.sendBounded({ address, kind: 'cancel' }, NOW + 1_000, 4, NOW));
      }
      expect(sent).toEqual([true, true, true, true, false, false]);
      expect(await a.read([address], NOW)).toHaveLength(4);
      // Another address is not affected by this one's bound.
      expect(
        await b.sendBounded({ address: 'session:other', kind: 'cancel' }, NOW + 1, 4, NOW),
      ).toBe(true);
    });
    // SQLite runs one write transaction at a time: no sender can come between a count and its
    // insert there. PostgreSQL counts only committed rows: a sender must wait for the others.
    if (engine.label === 'PostgreSQL') {
      it('holds the bound while another replica’s sender has not committed yet', async () => {
        const address = sessionAddress('racing-senders');
        const pending = await knexes[0].transaction();
        let others: Promise<boolean[]> | undefined;
        try {
          const first = new DatabaseSignalStore(pending as unknown as Knex);
          for (let i = 0; i < 3; i += 1) {
            expect(await first.sendBounded({ address, kind: 'cancel' }, NOW + 1_000, 4, NOW)).toBe(
              true,
            );
          }
          const second = new DatabaseSignalStore(knexes[1]);
          let settled = false;
          others = Promise.all(
            Array.from({ length: 3 }, () =>
              second.sendBounded({ address, kind: 'cancel' }, NOW + 1_000, 4, NOW),
            ),
          ).finally(() => {
            settled = true;
          });
          // Either they went through (counting none of the uncommitted three), or all three wait.
          await waitFor(
            async () => settled || (await advisoryLockWaiters(knexes[1])) === 3,
            'the other senders to finish or wait',
          );
        } finally {
          await pending.commit();
        }
        expect((await others).filter(Boolean)).toHaveLength(1);
        expect(await knexes[1](SIGNALS_TABLE).where({ address })).toHaveLength(4);
      });
    }
  });

  describe('a 2025 client’s cancellations and session ends across two replicas', () => {
    const buses: SignalBus[] = [];
    afterEach(() => buses.splice(0).forEach(bus => bus.stop()));
    function replicaOn(knex: Knex) {
      const bus = new SignalBus({
        store: new DatabaseSignalStore(knex),
        logger: mockServices.logger.mock(),
      });
      buses.push(bus);
      return new SessionCancellations(bus, mockServices.logger.mock());
    }
    const rowsOf = (sessionId: string) =>
      knexes[0](SIGNALS_TABLE).where({ address: sessionAddress(sessionId) });

    it('cancels the call of the session that sent the cancellation, once, and deletes the row', async () => {
      const [a, b] = [replicaOn(knexes[0]), replicaOn(knexes[1])];
      const target = sessionCall('mine', 42);
      const sameIdOtherSession = sessionCall('other', 42);
      const sameSessionOtherId = sessionCall('mine', '42');
      const unwatch = [target, sameIdOtherSession, sameSessionOtherId].map(c =>
        a.watch(c.call, c.requestKey),
      );

      await b.cancel('mine', 42, 'the user pressed stop');
      await waitFor(() => target.told.length > 0, 'the relayed cancellation');
      expect(target.told).toEqual(['the user pressed stop']);
      expect(target.call.endReason).toBe('cancelled');
      await waitFor(async () => (await rowsOf('mine')).length === 0, 'the row to be deleted');
      // Two more reads happen after the deletion (polls, or on PostgreSQL the announcements of
      // cancellations of calls that run nowhere): nothing else was cancelled, nothing twice.
      const read = jest.spyOn(DatabaseSignalStore.prototype, 'read');
      await b.cancel('mine', 'runs-nowhere-1');
      await b.cancel('mine', 'runs-nowhere-2');
      await waitFor(() => read.mock.calls.length >= 2, 'two more reads');
      read.mockRestore();
      expect(target.told).toEqual(['the user pressed stop']);
      expect(sameIdOtherSession.call.endReason).toBeUndefined();
      expect(sameSessionOtherId.call.endReason).toBeUndefined();
      unwatch.forEach(stop => stop());
    });

    it('reaches a call registered after the cancellation was sent (the POSTs raced)', async () => {
      const [a, b] = [replicaOn(knexes[0]), replicaOn(knexes[1])];
      await b.cancel('racing', 'late');
      const late = sessionCall('racing', 'late');
      const unwatch = a.watch(late.call, late.requestKey);
      await waitFor(() => late.call.endReason !== undefined, 'the relayed cancellation');
      expect(late.call.endReason).toBe('cancelled');
      unwatch();
    });

    it('ends the calls of a session ended on another replica, on every replica, and no other session’s', async () => {
      const [a, b, c] = [replicaOn(knexes[0]), replicaOn(knexes[1]), replicaOn(knexes[1])];
      const onA = sessionCall('deleted', 1);
      const onC = sessionCall('deleted', 2);
      const ofKept = sessionCall('kept', 1);
      const unwatch = [a.watch(onA.call, onA.requestKey), c.watch(onC.call, onC.requestKey)];
      unwatch.push(a.watch(ofKept.call, ofKept.requestKey));
      await b.sessionEnded('deleted');
      await waitFor(
        () => onA.call.endReason !== undefined && onC.call.endReason !== undefined,
        'the session end on both replicas',
      );
      expect([onA.call.endReason, onC.call.endReason]).toEqual(['client-gone', 'client-gone']);
      expect(ofKept.call.endReason).toBeUndefined();
      unwatch.forEach(stop => stop());
    });

    it('keeps at most 32 cancellations of one session waiting, whatever the client sends', async () => {
      const b = replicaOn(knexes[1]);
      for (let i = 0; i < 40; i += 1) await b.cancel('flooding', `nowhere-${i}`);
      expect(await rowsOf('flooding')).toHaveLength(32);
    });

    it('does not poll while no call waits', async () => {
      const read = jest.spyOn(DatabaseSignalStore.prototype, 'read');
      try {
        const a = replicaOn(knexes[0]);
        const watched = sessionCall('idle', 1);
        a.watch(watched.call, watched.requestKey)();
        // A call waiting on another replica proves time passed for polls that were due.
        const other = replicaOn(knexes[0]);
        const waiting = sessionCall('idle', 2);
        const unwatch = other.watch(waiting.call, waiting.requestKey);
        await waitFor(() => read.mock.instances.length >= 1, 'a read of the other replica');
        // A signal to the session after it (announced to every replica on PostgreSQL).
        await other.cancel('idle', 'runs-nowhere');
        await waitFor(() => read.mock.instances.length >= 2, 'reads of the other replica');
        unwatch();
        expect(new Set(read.mock.instances)).toHaveProperty('size', 1);
      } finally {
        read.mockRestore();
      }
    });
  });
});

describe('the bus with a failing store (test double: a store that always throws)', () => {
  it('logs a failed send without throwing, and a failing poll once, ending no call', async () => {
    const logger = mockServices.logger.mock();
    let reads = 0;
    const failing: SignalStore = {
      send: async () => Promise.reject(new Error('database down')),
      sendBounded: async () => Promise.reject(new Error('database down')),
      read: async () => {
        reads += 1;
        throw new Error('database down');
      },
      remove: async () => undefined,
      deleteExpired: async () => undefined,
    };
    const bus = new SignalBus({ store: failing, logger });
    const cancellations = new SessionCancellations(bus, logger);
    try {
      await expect(cancellations.cancel('session', 1, 'stop')).resolves.toBeUndefined();
      const { call, requestKey } = sessionCall('session', 1);
      const unwatch = cancellations.watch(call, requestKey);
      await waitFor(() => reads >= 3, 'three failed polls', 10_000);
      unwatch();
      expect(call.endReason).toBeUndefined();
      expect(logger.warn).toHaveBeenCalledTimes(2); // the send, and the first failed poll
    } finally {
      bus.stop();
    }
  });
});
