/*
 * Replicas woken by the access grant feed's `NOTIFY` (docs/contracts/mcp-access.md §5.3): on
 * PostgreSQL, two "replicas" (two connection pools, as two processes would have) on one
 * database; the reading replica's index polls only once an hour, so whatever it sees it saw
 * because the writer's transaction notified — take the `pg_notify` out of
 * DatabaseAccessGrantStore and these tests time out. Also: one listening connection per replica,
 * shared with the signal bus; a lost connection logged once while polling covers it, and what
 * was written meanwhile read after the reconnect; no listening without the shared connection
 * (SQLite, or `mcpBroker.signalNotifications: false`).
 */
import { mockServices } from '@backstage/backend-test-utils';
import { GrantIndex } from '../grants/GrantIndex';
import { testGrant } from '../grants/__testUtils__/testGrant';
import { callAddress, SignalBus, type Signal } from '../replicas/SignalBus';
import { waitFor } from '../testing/waitFor';
import { ACCESS_GRANTS_CHANNEL, DatabaseAccessGrantStore } from './DatabaseAccessGrantStore';
import { DatabaseSignalStore } from './DatabaseSignalStore';
import { PostgresNotifications } from './PostgresNotifications';
import { listeningBackends } from './__testUtils__/listeningBackends';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('access grant notification tests');
const postgres = engines.filter(engine => engine.label === 'PostgreSQL');

/** Longer than any test runs: a poll this far apart never comes in time. */
const HOUR_MS = 3_600_000;
/** Per test: room for the waits (8 s each) to fail with their own message on a loaded machine. */
const TEST_TIMEOUT_MS = 30_000;

const freshSubject = (what: string) =>
  `user:default/${what}-${Math.random().toString(36).slice(2)}`;

describe.each(postgres)('access grants on $label notifications', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** The reading replica: its own listening connection, an index polling once an hour. */
  async function readingReplica(logger = mockServices.logger.mock()) {
    const notifications = new PostgresNotifications({ knex: knexes[1], reconnectInitialMs: 50 });
    const index = await GrantIndex.create({
      store: new DatabaseAccessGrantStore(knexes[1], { notifications }),
      logger,
      pollMs: HOUR_MS,
      staleAfterMs: 2 * HOUR_MS,
    });
    closers.push(() => index.close());
    return { index, notifications, logger };
  }

  it(
    'shows another replica’s grant and its removal without a poll',
    async () => {
      const writer = new DatabaseAccessGrantStore(knexes[0]);
      const { index } = await readingReplica();
      await waitFor(() => index.listening, 'the listening connection');
      const subject = freshSubject('woken');
      const grant = testGrant({ subject });
      const versionBefore = index.versionOf(subject);
      await writer.upsert([grant]);
      await waitFor(() => index.grantsOf(subject).length === 1, 'the grant on the other replica');
      expect(index.grantsOf(subject)[0]).toMatchObject({ id: grant.id, plan: 'bronze' });
      expect(index.versionOf(subject)).not.toBe(versionBefore);
      await writer.remove([grant.id]);
      await waitFor(() => index.grantsOf(subject).length === 0, 'the removal on the other replica');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'shares the replica’s one listening connection with the signal bus',
    async () => {
      const before = await listeningBackends(knexes[0]);
      const notifications = new PostgresNotifications({ knex: knexes[1] });
      const bus = new SignalBus({
        store: new DatabaseSignalStore(knexes[1], { notifications }),
        logger: mockServices.logger.mock(),
      });
      closers.push(() => bus.stop());
      const received: Signal[] = [];
      const unwatch = bus.watch(
        callAddress('shared-connection'),
        signal => received.push(signal) > 0,
        HOUR_MS,
      );
      const index = await GrantIndex.create({
        store: new DatabaseAccessGrantStore(knexes[1], { notifications }),
        logger: mockServices.logger.mock(),
        pollMs: HOUR_MS,
        staleAfterMs: 2 * HOUR_MS,
      });
      closers.push(() => index.close());
      await waitFor(() => bus.listening && index.listening, 'both listening');
      expect(await listeningBackends(knexes[0])).toHaveLength(before.length + 1);
      // Each hears its own channel through it.
      const subject = freshSubject('shared');
      await new DatabaseAccessGrantStore(knexes[0]).upsert([testGrant({ subject })]);
      await new DatabaseSignalStore(knexes[0]).send(
        { address: callAddress('shared-connection'), kind: 'end' },
        Date.now() + 60_000,
      );
      await waitFor(() => index.grantsOf(subject).length === 1, 'the grant');
      await waitFor(() => received.length === 1, 'the signal');
      // The connection stays while one of them listens, and ends with the last.
      unwatch();
      await bus.stop();
      expect(index.listening).toBe(true);
      const later = freshSubject('after-the-bus');
      await new DatabaseAccessGrantStore(knexes[0]).upsert([testGrant({ subject: later })]);
      await waitFor(() => index.grantsOf(later).length === 1, 'a grant after the bus stopped');
      await index.close();
      await waitFor(
        async () => (await listeningBackends(knexes[0])).length === before.length,
        'the listening connection to close',
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'logs a lost connection once, and reads what was written meanwhile after the reconnect',
    async () => {
      const { index, logger } = await readingReplica();
      await waitFor(() => index.listening, 'the listening connection');
      const writer = new DatabaseAccessGrantStore(knexes[0]);
      for (let killed = 0; killed < 2; killed++) {
        const [pid] = await listeningBackends(knexes[0]);
        await knexes[0].raw('select pg_terminate_backend(?)', [pid]);
        await waitFor(() => !index.listening, 'the lost connection');
        const subject = freshSubject(`meanwhile-${killed}`);
        await writer.upsert([testGrant({ subject })]);
        await waitFor(() => index.grantsOf(subject).length === 1, 'the grant written meanwhile');
        expect(index.listening).toBe(true);
      }
      expect(logger.warn).toHaveBeenCalledTimes(2);
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringMatching(/^Not notified of MCP access grant changes \(reading the feed every/),
      );
      expect(logger.info).toHaveBeenCalledWith('Notified of MCP access grant changes again');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'notifies only writes that changed something, in commit order',
    async () => {
      const raw = await knexes[1].client.acquireRawConnection();
      const revisions: number[] = [];
      raw.on('notification', (message: { payload?: string }) =>
        revisions.push(Number(message.payload)),
      );
      try {
        await raw.query(`LISTEN ${ACCESS_GRANTS_CHANNEL}`);
        const writer = new DatabaseAccessGrantStore(knexes[0]);
        const grant = testGrant({ subject: freshSubject('ordered') });
        const first = await writer.upsert([grant]);
        expect(await writer.upsert([grant])).toBeUndefined(); // unchanged: no revision, no NOTIFY
        const second = await writer.remove([grant.id]);
        await waitFor(() => revisions.length >= 2, 'two notifications');
        expect(revisions).toEqual([first?.revision, second?.revision]);
      } finally {
        await knexes[1].client.destroyRawConnection(raw);
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe.each(engines)('access grants on $label without a listening connection', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it(
    'does not listen, and the index follows the feed by polling',
    async () => {
      const store = new DatabaseAccessGrantStore(knexes[1]);
      const listener = { changed: jest.fn(), listening: jest.fn(), lost: jest.fn() };
      expect(store.listen(listener)).toBeUndefined();
      expect(
        PostgresNotifications.forReplica(knexes[1], engine.label === 'SQLite'),
      ).toBeUndefined();
      const index = await GrantIndex.create({
        store,
        logger: mockServices.logger.mock(),
        pollMs: 100,
      });
      try {
        const subject = freshSubject('polled');
        await new DatabaseAccessGrantStore(knexes[0]).upsert([testGrant({ subject })]);
        await waitFor(() => index.grantsOf(subject).length === 1, 'the polled grant');
        expect(index.listening).toBe(false);
      } finally {
        await index.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
