import { TestDatabases } from '@backstage/backend-test-utils';
import { OWNER_ANNOTATION } from '@devportal/plugin-portal-common';
import knexFactory, { type Knex } from 'knex';
import { createServer } from 'node:net';
import {
  DatabasePortalStore,
  migrateDownAll,
  migrateUp,
} from './DatabasePortalStore';
import { runPortalStoreContract } from './testing/portalStoreContract';

const POSTGRES_ENV = 'BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING';
const databases = TestDatabases.create({ ids: ['POSTGRES_15', 'SQLITE_3'] });
const ENGINES = [
  { id: 'SQLITE_3', label: 'SQLite' },
  { id: 'POSTGRES_15', label: 'PostgreSQL' },
] as const;

function databaseService(knex: Knex, skipMigrations = false) {
  return {
    getClient: async () => knex,
    migrations: { skip: skipMigrations },
  };
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise(resolve => server.close(resolve));
  if (address === null || typeof address === 'string') {
    throw new Error('no TCP address');
  }
  return address.port;
}

/**
 * A connection to an empty portal database. SQLite gets a new in-memory database each
 * time; PostgreSQL shares one database (emptied here) across the contract's tests,
 * because every DROP DATABASE at shutdown forces a ~1.5 s checkpoint.
 */
let sharedPostgres: Knex | undefined;
async function emptyDatabase(id: (typeof ENGINES)[number]['id']): Promise<Knex> {
  if (id === 'SQLITE_3') {
    return databases.init(id);
  }
  sharedPostgres ??= await databases.init(id);
  // A pool of its own per test, so a test may destroy it (makeUnavailable).
  const knex = knexFactory(sharedPostgres.client.config);
  await migrateUp(knex);
  // Children first; the foreign keys cascade anyway.
  for (const table of ['portal_api_key_secrets', 'portal_api_keys', 'portal_api_products']) {
    await knex(table).delete();
  }
  return knex;
}

for (const { id, label } of ENGINES) {
  if (!databases.supports(id)) {
    const reason = `${label}: skipped, ${POSTGRES_ENV} not set`;
    // eslint-disable-next-line no-console
    console.warn(`DatabasePortalStore tests — ${reason}`);
    describe(reason, () => {
      it('is skipped only because no PostgreSQL server is configured', () => {
        expect(process.env[POSTGRES_ENV]).toBeFalsy();
      });
    });
    continue;
  }

  runPortalStoreContract(`DatabasePortalStore on ${label}`, async () => {
    const knex = await emptyDatabase(id);
    const store = await DatabasePortalStore.create({
      database: databaseService(knex),
    });
    return {
      store,
      cleanup: () => knex.destroy(),
      makeUnavailable: () => knex.destroy(),
    };
  });

  describe(`DatabasePortalStore on ${label}`, () => {
    it('migrates down and up again', async () => {
      const knex = await databases.init(id);
      await migrateUp(knex);
      expect(await knex.schema.hasTable('portal_api_key_secrets')).toBe(true);
      await migrateDownAll(knex);
      for (const table of [
        'portal_api_products',
        'portal_api_keys',
        'portal_api_key_secrets',
      ]) {
        expect(await knex.schema.hasTable(table)).toBe(false);
      }
      const store = await DatabasePortalStore.create({
        database: databaseService(knex),
      });
      await store.createProduct({
        namespace: 'toystore',
        name: 'toys',
        annotations: { [OWNER_ANNOTATION]: 'user:default/bob' },
        spec: {
          displayName: 'Toys',
          targetRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: 'toystore',
          },
          approvalMode: 'manual',
          publishStatus: 'Draft',
        },
      });
      expect(await store.listProducts({})).toHaveLength(1);
      await knex.destroy();
    }, 30_000);

    it('does not migrate when the database service says to skip', async () => {
      const knex = await databases.init(id);
      const store = await DatabasePortalStore.create({
        database: databaseService(knex, true),
      });
      expect(await knex.schema.hasTable('portal_api_products')).toBe(false);
      // Without tables the store fails with the driver's error, not a mapped one. The
      // outcome is compared as text: Jest's rejects.toThrow() treats a driver error from
      // another realm as "did not throw".
      const outcome = await store.listProducts({}).then(
        () => 'resolved',
        (error: unknown) => String(error),
      );
      expect(outcome).toMatch(/no such table|does not exist/);
      await knex.destroy();
    }, 30_000);
  });
}

// knex logs every failed connection attempt; the assertions are the point here.
const SILENT_KNEX_LOG = { warn() {}, error() {}, debug() {}, deprecate() {} };

describe('DatabasePortalStore without a reachable database', () => {
  it('answers ServiceUnavailableError when no connection frees up in time', async () => {
    // SQLite has one connection; an open transaction holds it past the timeout.
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: ':memory:',
      useNullAsDefault: true,
      acquireConnectionTimeout: 300,
      log: SILENT_KNEX_LOG,
    });
    try {
      const store = await DatabasePortalStore.create({
        database: databaseService(knex),
      });
      const blocker = await knex.transaction();
      await expect(store.listProducts({})).rejects.toMatchObject({
        name: 'ServiceUnavailableError',
        message: expect.stringContaining('retry'),
      });
      await blocker.rollback();
      await expect(store.listProducts({})).resolves.toEqual([]);
    } finally {
      await knex.destroy();
    }
  }, 15_000);

  it('answers ServiceUnavailableError when PostgreSQL refuses connections', async () => {
    const knex = knexFactory({
      client: 'pg',
      connection: {
        host: '127.0.0.1',
        port: await closedPort(),
        user: 'postgres',
        password: 'postgres',
        database: 'portal',
      },
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 2_000,
      log: SILENT_KNEX_LOG,
    });
    try {
      await expect(
        DatabasePortalStore.create({ database: databaseService(knex) }),
      ).rejects.toMatchObject({ name: 'ServiceUnavailableError' });
      const store = await DatabasePortalStore.create({
        database: databaseService(knex, true),
      });
      await expect(
        store.getKey({ namespace: 'toystore', name: 'k' }),
      ).rejects.toMatchObject({ name: 'ServiceUnavailableError' });
    } finally {
      await knex.destroy();
    }
  }, 15_000);
});
