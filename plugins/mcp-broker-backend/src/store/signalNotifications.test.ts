/*
 * The bus between replicas woken by PostgreSQL `LISTEN/NOTIFY` instead of polls: two SignalBuses
 * ("replicas", two connection pools as two processes would have) on one database, their waiters
 * asking to be read only once an hour, so that whatever arrives came by notification — also
 * through the held-call store's conditional hand-over, also after the listening connection was
 * killed by the server (and nothing sent meanwhile is lost); the listening connection closes at
 * shutdown. On SQLite the same bus polls.
 */
import { mockServices } from '@backstage/backend-test-utils';
import knexFactory, { type Knex } from 'knex';
import { callAddress, SignalBus, type Signal } from '../replicas/SignalBus';
import { waitFor } from '../testing/waitFor';
import { DatabaseHeldCallStore } from './DatabaseHeldCallStore';
import { DatabaseSignalStore, SIGNALS_CHANNEL } from './DatabaseSignalStore';
import { listeningBackends } from './__testUtils__/listeningBackends';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('replica signal notification tests');
const postgres = engines.filter(engine => engine.label === 'PostgreSQL');
const sqlite = engines.filter(engine => engine.label === 'SQLite');

/** Longer than any test runs: a waiter asking this is never polled in time. */
const NEVER_MS = 3_600_000;
const TTL_MS = 60_000;

/** A waiter that records what reaches it (consuming it). */
function recorder(bus: SignalBus, address: string, pollMs = NEVER_MS) {
  const received: Signal[] = [];
  const unwatch = bus.watch(
    address,
    signal => {
      received.push(signal);
      return true;
    },
    pollMs,
  );
  return { received, unwatch };
}

describe.each(postgres)('the bus between replicas on $label notifications', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  const buses: SignalBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map(bus => bus.stop()));
  });
  const busOn = (knex: Knex, logger = mockServices.logger.mock()) => {
    const bus = new SignalBus({ store: new DatabaseSignalStore(knex), logger });
    buses.push(bus);
    return bus;
  };

  it('wakes a waiter on another replica with the signal, in order, without polling', async () => {
    const [waiting, sending] = [busOn(knexes[0]), busOn(knexes[1])];
    const address = callAddress('notified-call');
    const { received, unwatch } = recorder(waiting, address);
    await waitFor(() => waiting.listening, 'the listening connection');
    const read = jest.spyOn(DatabaseSignalStore.prototype, 'read');
    try {
      await sending.send({ address, kind: 'message', payload: '1' }, TTL_MS);
      await sending.send({ address, kind: 'message', payload: '2' }, TTL_MS);
      await sending.send({ address, kind: 'end' }, TTL_MS);
      await waitFor(() => received.length === 3, 'the three signals');
      expect(received.map(s => s.payload ?? s.kind)).toEqual(['1', '2', 'end']);
      // Only reads of the notified address, none of the sender's.
      for (const [addresses] of read.mock.calls) expect(addresses).toEqual([address]);
      expect(new Set(read.mock.instances)).toHaveProperty('size', 1);
    } finally {
      read.mockRestore();
      unwatch();
    }
  });

  it('announces a held call’s answer, and no hand-over that did not happen', async () => {
    const holder = busOn(knexes[0]);
    const answering = new DatabaseHeldCallStore(knexes[1]);
    // A listener of its own on the channel sees every notification, in commit order.
    const raw = knexFactory(knexes[1].client.config);
    const connection = await raw.client.acquireRawConnection();
    const announced: string[] = [];
    connection.on('notification', (message: { payload?: string }) =>
      announced.push(message.payload ?? ''),
    );
    try {
      await connection.query(`LISTEN ${SIGNALS_CHANNEL}`);
      const { received, unwatch } = recorder(holder, callAddress('held-call'));
      await waitFor(() => holder.listening, 'the listening connection');
      const now = Date.now();
      // No round published: nothing goes in, nobody is woken.
      expect(await answering.deliverAnswer('held-call', '{"n":0}', now, now + TTL_MS)).toBe(false);
      await answering.publishRound({
        callId: 'held-call',
        round: 1,
        backend: 'modern',
        protocolVersion: '2026-07-28',
        asked: [{ key: 'k', rawId: '"k"' }],
        expiresAt: now + TTL_MS,
      });
      expect(await answering.deliverAnswer('held-call', '{"n":1}', now, now + TTL_MS)).toBe(true);
      await waitFor(() => received.length === 1, 'the answer');
      expect(received[0]).toMatchObject({ kind: 'answer', payload: '{"n":1}' });
      await waitFor(() => announced.length === 1, 'the notification');
      expect(announced).toEqual([callAddress('held-call')]);
      unwatch();
    } finally {
      await raw.client.destroyRawConnection(connection);
      await raw.destroy();
    }
  });

  it('listens again after the server killed its connection, and loses nothing sent meanwhile', async () => {
    const logger = mockServices.logger.mock();
    const [waiting, sending] = [busOn(knexes[0], logger), busOn(knexes[1])];
    const address = callAddress('reconnecting-call');
    const { received, unwatch } = recorder(waiting, address);
    await waitFor(() => waiting.listening, 'the listening connection');
    const [pid] = await listeningBackends(knexes[1]);
    await knexes[1].raw('select pg_terminate_backend(?)', [pid]);
    await waitFor(() => !waiting.listening, 'the lost connection');
    // Sent while nobody listens (the waiter is polled once an hour): the read after the
    // reconnect finds it.
    await sending.send({ address, kind: 'message', payload: 'while down' }, TTL_MS);
    await waitFor(() => received.length === 1, 'the signal sent meanwhile');
    expect(waiting.listening).toBe(true);
    await sending.send({ address, kind: 'message', payload: 'after' }, TTL_MS);
    await waitFor(() => received.length === 2, 'the signal sent after the reconnect');
    expect(received.map(s => s.payload)).toEqual(['while down', 'after']);
    expect(await listeningBackends(knexes[1])).not.toContain(pid);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.info).toHaveBeenCalledWith(
      'Notified of the signals of other broker replicas again',
    );
    unwatch();
  });

  it('reaches a waiter that began after the signal was sent', async () => {
    const [waiting, sending] = [busOn(knexes[0]), busOn(knexes[1])];
    const early = recorder(waiting, callAddress('someone-else'));
    await waitFor(() => waiting.listening, 'the listening connection');
    const address = callAddress('late-waiter');
    await sending.send({ address, kind: 'cancel' }, TTL_MS);
    // Its catch-up read comes within its poll interval.
    const late = recorder(waiting, address, 100);
    await waitFor(() => late.received.length === 1, 'the earlier signal');
    expect(late.received[0]).toMatchObject({ address, kind: 'cancel' });
    expect(early.received).toEqual([]);
    early.unwatch();
    late.unwatch();
  });

  it('holds one listening connection per replica, opened when something waits, closed at shutdown', async () => {
    const before = await listeningBackends(knexes[1]);
    const bus = new SignalBus({
      store: new DatabaseSignalStore(knexes[0]),
      logger: mockServices.logger.mock(),
    });
    const waiters = [recorder(bus, callAddress('one')), recorder(bus, callAddress('two'))];
    await waitFor(() => bus.listening, 'the listening connection');
    expect(await listeningBackends(knexes[1])).toHaveLength(before.length + 1);
    waiters.forEach(waiter => waiter.unwatch());
    recorder(bus, callAddress('three'));
    await bus.stop();
    expect(bus.listening).toBe(false);
    await waitFor(
      async () => (await listeningBackends(knexes[1])).length === before.length,
      'the listening connection to close',
    );
  });
});

describe.each(postgres)('the bus between replicas on $label without notifications', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it('only polls when notifications are off (mcpBroker.signalNotifications: false)', async () => {
    const before = await listeningBackends(knexes[1]);
    const store = new DatabaseSignalStore(knexes[0], { notify: false });
    const bus = new SignalBus({ store, logger: mockServices.logger.mock() });
    try {
      const listener = { signalSent: jest.fn(), listening: jest.fn(), lost: jest.fn() };
      expect(store.listen(listener)).toBeUndefined();
      const { received, unwatch } = recorder(bus, callAddress('polled-on-postgres'), 50);
      await bus.send({ address: callAddress('polled-on-postgres'), kind: 'end' }, TTL_MS);
      await waitFor(() => received.length === 1, 'the polled signal');
      expect(bus.listening).toBe(false);
      expect(await listeningBackends(knexes[1])).toEqual(before);
      unwatch();
    } finally {
      await bus.stop();
    }
  });
});

describe.each(sqlite)('the bus between replicas on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it('polls: no listening connection, and the signal arrives within the waiter’s interval', async () => {
    const bus = new SignalBus({
      store: new DatabaseSignalStore(knexes[0]),
      logger: mockServices.logger.mock(),
    });
    try {
      const listener = { signalSent: jest.fn(), listening: jest.fn(), lost: jest.fn() };
      expect(new DatabaseSignalStore(knexes[0]).listen(listener)).toBeUndefined();
      const { received, unwatch } = recorder(bus, callAddress('polled'), 50);
      await bus.send({ address: callAddress('polled'), kind: 'end' }, TTL_MS);
      await waitFor(() => received.length === 1, 'the polled signal');
      expect(bus.listening).toBe(false);
      unwatch();
    } finally {
      await bus.stop();
    }
  });

  it('reads a waiter in a hurry within its interval while a patient one already waits', async () => {
    const bus = new SignalBus({
      store: new DatabaseSignalStore(knexes[0]),
      logger: mockServices.logger.mock(),
    });
    try {
      const patient = recorder(bus, callAddress('patient'));
      const hurried = recorder(bus, callAddress('hurried'), 50);
      await bus.send({ address: callAddress('hurried'), kind: 'end' }, TTL_MS);
      await waitFor(() => hurried.received.length === 1, 'the hurried waiter’s signal');
      expect(patient.received).toEqual([]);
      patient.unwatch();
      hurried.unwatch();
    } finally {
      await bus.stop();
    }
  });
});
