import { TestDatabases } from '@backstage/backend-test-utils';
import { OWNER_ANNOTATION } from '@devportal/plugin-portal-common';
import knexFactory, { type Knex } from 'knex';
import { createServer } from 'node:net';
import { DatabasePortalStore } from './DatabasePortalStore';
import { DATABASE_ENGINES, describeSkippedEngine } from './testing/databaseEngines';
import { migrateDown, migrateDownAll, migrateUp } from './databaseMigrations';
import { runPortalStoreContract } from './testing/portalStoreContract';
import { walkPages } from './testing/walkPages';

const databases = TestDatabases.create({ ids: ['POSTGRES_15', 'SQLITE_3'] });

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
async function emptyDatabase(id: (typeof DATABASE_ENGINES)[number]['id']): Promise<Knex> {
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

for (const { id, label } of DATABASE_ENGINES) {
  if (!databases.supports(id)) {
    describeSkippedEngine(label, 'DatabasePortalStore');
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
        'portal_page_token_keys',
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

    it('backfills the target columns of existing products and access requests', async () => {
      const knex = await emptyDatabase(id);
      const store = await DatabasePortalStore.create({ database: databaseService(knex) });
      const product = (name: string, targetRef: Record<string, string>, plans?: unknown[]) =>
        store.createProduct({
          namespace: 'toystore',
          name,
          annotations: { [OWNER_ANNOTATION]: 'user:default/bob' },
          spec: {
            displayName: name,
            targetRef: targetRef as never,
            approvalMode: 'manual',
            publishStatus: 'Published',
            ...(plans !== undefined && { plans: plans as never }),
          },
        });
      await product('tools', { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' }, [
        { tier: 'bronze', limits: { toolCalls: [] } },
      ]);
      await product('toys', { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' });
      for (const name of ['tools', 'toys']) {
        await store.createKey({
          namespace: 'toystore',
          spec: {
            apiProductRef: { name },
            planTier: 'bronze',
            requestedBy: { userId: 'user:default/alice' },
          },
          approval: { reviewedBy: 'user:default/bob' },
        });
      }
      await migrateDown(knex, '20261208000000_mcp_targets.js');
      expect(await knex.schema.hasColumn('portal_api_keys', 'mcp_target')).toBe(false);

      await migrateUp(knex);

      expect(
        await knex('portal_api_products')
          .select('name', 'target_kind', 'target_name')
          .orderBy('name'),
      ).toEqual([
        { name: 'tools', target_kind: 'MCPServer', target_name: 'example' },
        { name: 'toys', target_kind: 'HTTPRoute', target_name: 'r' },
      ]);
      expect(
        await knex('portal_api_keys').select('product_name', 'mcp_target').orderBy('product_name'),
      ).toEqual([
        { product_name: 'tools', mcp_target: 'MCPServer/example' },
        { product_name: 'toys', mcp_target: null },
      ]);
      const grants = await store.listMcpGrantsPage({}, new Date(), { limit: 10 });
      expect(grants.items.map(grant => grant.key.spec.apiProductRef.name)).toEqual(['tools']);
      await knex.destroy();
    }, 30_000);

    it('keeps keys and their secrets when migrations are rolled back one at a time', async () => {
      const knex = await emptyDatabase(id);
      const store = await DatabasePortalStore.create({ database: databaseService(knex) });
      await store.createProduct({
        namespace: 'toystore',
        name: 'toys',
        annotations: { [OWNER_ANNOTATION]: 'user:default/bob' },
        spec: {
          displayName: 'Toys',
          targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' },
          approvalMode: 'manual',
          publishStatus: 'Published',
        },
      });
      await store.createKey({
        namespace: 'toystore',
        spec: {
          apiProductRef: { name: 'toys' },
          planTier: 'bronze',
          requestedBy: { userId: 'user:default/alice' },
        },
        approval: { reviewedBy: 'user:default/bob', secret: 'toys-secret' },
      });
      const counts = async () => ({
        keys: Number((await knex('portal_api_keys').count({ n: '*' }))[0].n),
        secrets: Number((await knex('portal_api_key_secrets').count({ n: '*' }))[0].n),
      });
      const before = await counts();
      expect(before).toEqual({ keys: 1, secrets: 1 });
      // SQLite drops a column by rebuilding its table: done inside a transaction, where foreign
      // keys cannot be switched off, the rebuild would cascade over the rows that reference it.
      for (const name of ['20261208000000_mcp_targets.js', '20261206000000_key_expiry.js']) {
        await migrateDown(knex, name);
        expect({ after: name, ...(await counts()) }).toEqual({ after: name, ...before });
      }
      await migrateUp(knex);
      expect(await counts()).toEqual(before);
      await knex.destroy();
    }, 30_000);

    it('pages in creation-time order, then namespace, then name', async () => {
      const knex = await emptyDatabase(id);
      const store = await DatabasePortalStore.create({ database: databaseService(knex) });
      for (const [namespace, name] of [
        ['b', 'p1'],
        ['a', 'p2'],
        ['a', 'p1'],
        ['c', 'p0'],
      ]) {
        await store.createProduct({
          namespace,
          name,
          annotations: { [OWNER_ANNOTATION]: 'user:default/bob' },
          spec: {
            displayName: name,
            targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' },
            approvalMode: 'manual',
            publishStatus: 'Draft',
          },
        });
      }
      // c/p0 is the oldest; the others share one second.
      await knex('portal_api_products').update({ created_at: '2030-01-01T00:00:01Z' });
      await knex('portal_api_products')
        .where({ namespace: 'c' })
        .update({ created_at: '2030-01-01T00:00:00Z' });
      const pages = await walkPages(page => store.listProductsPage({}, page), 1);
      const walked = pages.flat().map(p => `${p.metadata.namespace}/${p.metadata.name}`);
      expect(walked).toEqual(['c/p0', 'a/p1', 'a/p2', 'b/p1']);
      await knex.destroy();
    }, 30_000);

    it('reads a page of a filtered key list in index order, with no sort of the matches', async () => {
      const knex = await emptyDatabase(id);
      const store = await DatabasePortalStore.create({ database: databaseService(knex) });
      const queries: Array<{ sql: string; bindings: unknown[] }> = [];
      const capture = (query: { sql: string; bindings: unknown[] }) => queries.push(query);
      knex.on('query', capture);
      const cursor = Buffer.from('["2030-01-01T00:00:00Z","ns","name"]').toString('base64url');
      await store.listKeysPage({ phase: 'Pending' }, { limit: 100, cursor });
      await store.listKeysPage({ requestedBy: 'user:default/alice' }, { limit: 100, cursor });
      await store.listProductsPage({ ownerRefs: ['user:default/bob'] }, { limit: 100, cursor });
      knex.off('query', capture);
      expect(queries).toHaveLength(3);
      for (const query of queries) {
        const plan = await explain(knex, query.sql, query.bindings);
        expect({ sql: query.sql, plan }).toEqual({
          sql: query.sql,
          plan: expect.stringMatching(/page_idx/),
        });
        expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY|\bSort\b/);
      }
      await knex.destroy();
    }, 30_000);

    it('keeps one page token key per database, whichever store asks first', async () => {
      const knex = await emptyDatabase(id);
      // Two replicas on one database; both ask for the key at once.
      const one = await DatabasePortalStore.create({ database: databaseService(knex) });
      const two = await DatabasePortalStore.create({ database: databaseService(knex) });
      const [first, second] = await Promise.all([one.pageTokenKey(), two.pageTokenKey()]);
      expect(first.length).toBe(32);
      expect(second.equals(first)).toBe(true);
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

/**
 * The query plan of a statement as text. On PostgreSQL, sequential scans and sorts are
 * priced out, so the plan shows whether an index can deliver the page in order at all
 * (a tiny test table would otherwise always be scanned).
 */
async function explain(knex: Knex, sql: string, bindings: unknown[]): Promise<string> {
  if (knex.client.config.client === 'pg') {
    return knex.transaction(async trx => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      await trx.raw('SET LOCAL enable_sort = off');
      const result = await trx.raw(`EXPLAIN ${sql.replace(/\$\d+/g, '?')}`, bindings as any);
      return result.rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
    });
  }
  const rows = await knex.raw(`EXPLAIN QUERY PLAN ${sql}`, bindings as any);
  return rows.map((row: { detail: string }) => row.detail).join('\n');
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
      await expect(store.getKey({ namespace: 'toystore', name: 'k' })).rejects.toMatchObject({
        name: 'ServiceUnavailableError',
      });
    } finally {
      await knex.destroy();
    }
  }, 15_000);
});
