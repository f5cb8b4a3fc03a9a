/*
 * The requestState nonce store on memory, SQLite and PostgreSQL, each with two
 * "replicas" (separate connection pools on PostgreSQL), and a sealer per replica sharing them:
 * a state sealed on one replica opens once on any, never twice.
 */
import type { Knex } from 'knex';
import { RequestStateRefusal, RequestStateSealer } from '../inputRequests/RequestStateSealer';
import {
  MemoryRequestStateNonceStore,
  RequestStateNonceStore,
} from '../inputRequests/requestStateNonces';
import { fixedHmacKeys } from '../inputRequests/requestStateKey';
import {
  DatabaseRequestStateNonceStore,
  REQUEST_STATE_NONCES_TABLE,
} from './DatabaseRequestStateNonceStore';
import { migrateBrokerDatabase, rollbackBrokerDatabase } from './migrations';
import { replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines: databaseEngines } = replicaDatabases('requestState store tests');

interface Replica {
  nonces: RequestStateNonceStore;
}
interface Engine {
  label: string;
  open(): Promise<{ replicas: Replica[]; knex?: Knex; close(): Promise<void> }>;
}

const engines: Engine[] = [
  {
    label: 'memory',
    async open() {
      const nonces = new MemoryRequestStateNonceStore();
      return { replicas: [{ nonces }, { nonces }], close: async () => {} };
    },
  },
];
for (const database of databaseEngines) {
  engines.push({
    label: database.label,
    async open() {
      const { knexes, close } = await database.open();
      return {
        knex: knexes[0],
        replicas: knexes.map(knex => ({
          nonces: new DatabaseRequestStateNonceStore(knex),
        })),
        close,
      };
    },
  });
}

const NOW = 1_800_000_000_000;
const BINDING = {
  principal: 'user:default/alice',
  method: 'tools/call',
  name: 'example_confirm',
  arguments: { n: 1 },
};

describe.each(engines)('requestState stores on $label', engine => {
  let opened: Awaited<ReturnType<Engine['open']>>;
  beforeAll(async () => {
    opened = await engine.open();
  }, 60_000);
  afterAll(async () => opened?.close());
  const replica = (i: number) => opened.replicas[i];

  it('lets exactly one of many concurrent claims of a nonce win, across replicas', async () => {
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => replica(i % 2).nonces.claim('nonce-a', NOW + 60_000)),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await replica(1).nonces.claim('nonce-b', NOW + 60_000)).toBe(true);
  });

  it('forgets only expired nonces', async () => {
    await replica(0).nonces.claim('old', NOW - 1);
    await replica(0).nonces.claim('young', NOW + 1_000);
    await replica(1).nonces.deleteExpired(NOW);
    expect(await replica(0).nonces.claim('old', NOW + 1_000)).toBe(true);
    expect(await replica(0).nonces.claim('young', NOW + 1_000)).toBe(false);
  });

  it('opens a state sealed on one replica once, on the other, and refuses the replay there too', async () => {
    const key = Buffer.alloc(32, 3);
    const [a, b] = [0, 1].map(
      i =>
        new RequestStateSealer({
          keys: fixedHmacKeys(key),
          ttlMs: 60_000,
          nonces: replica(i).nonces,
        }),
    );
    const token = a.seal(BINDING, { callId: 'call-9' });
    await expect(b.open(token, BINDING)).resolves.toMatchObject({ callId: 'call-9' });
    const replay = await b.open(token, BINDING).catch(error => error);
    expect(replay).toBeInstanceOf(RequestStateRefusal);
    expect(replay.reason).toBe('replayed');
    expect((await a.open(token, BINDING).catch(error => error)).reason).toBe('replayed');
  });
});

// The memory store has no schema (one process).
describe.each(engines.filter(engine => engine.label !== 'memory'))(
  'requestState schema on $label',
  engine => {
    let opened: Awaited<ReturnType<Engine['open']>>;
    beforeAll(async () => {
      opened = await engine.open();
    }, 60_000);
    afterAll(async () => opened?.close());

    it('migrates up and down cleanly', async () => {
      const knex = opened.knex!;
      expect(await knex.schema.hasTable(REQUEST_STATE_NONCES_TABLE)).toBe(true);
      await rollbackBrokerDatabase(knex);
      expect(await knex.schema.hasTable(REQUEST_STATE_NONCES_TABLE)).toBe(false);
      await migrateBrokerDatabase(knex);
      expect(await knex.schema.hasTable(REQUEST_STATE_NONCES_TABLE)).toBe(true);
    });
  },
);
