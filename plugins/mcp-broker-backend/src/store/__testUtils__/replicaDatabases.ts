/*
 * The broker's database tests on SQLite and PostgreSQL, each as two "replicas" seeing the same
 * data: on PostgreSQL two connection pools (as two processes would have), on SQLite in memory the
 * one connection. The broker's migrations are applied. PostgreSQL runs when
 * BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set; otherwise it is skipped with a
 * warning naming the variable.
 */
import { TestDatabases } from '@backstage/backend-test-utils';
import knexFactory, { type Knex } from 'knex';
import { migrateBrokerDatabase } from '../migrations';

const POSTGRES_ENV = 'BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING';

/** One database engine to run a store suite on. */
export interface ReplicaDatabase {
  label: 'SQLite' | 'PostgreSQL';
  /** Creates a fresh migrated database and two clients on it; `close` ends the second one. */
  open(): Promise<{ knexes: [Knex, Knex]; close(): Promise<void> }>;
}

/**
 * The engines available here, and the TestDatabases behind them (call at module level:
 * TestDatabases registers its hooks). `suite` names the tests in the skip warning.
 */
export function replicaDatabases(suite: string): {
  engines: ReplicaDatabase[];
  databases: TestDatabases;
} {
  const databases = TestDatabases.create({ ids: ['POSTGRES_15', 'SQLITE_3'] });
  const engines: ReplicaDatabase[] = [];
  for (const { id, label } of [
    { id: 'SQLITE_3', label: 'SQLite' },
    { id: 'POSTGRES_15', label: 'PostgreSQL' },
  ] as const) {
    if (!databases.supports(id)) {
      // eslint-disable-next-line no-console
      console.warn(`${suite} — ${label}: skipped, ${POSTGRES_ENV} not set`);
      continue;
    }
    engines.push({
      label,
      async open() {
        const first = await databases.init(id);
        await migrateBrokerDatabase(first);
        const second = id === 'SQLITE_3' ? first : knexFactory(first.client.config);
        return {
          knexes: [first, second],
          close: async () => {
            if (second !== first) await second.destroy();
          },
        };
      },
    });
  }
  return { engines, databases };
}

/**
 * The two clients of `engine`'s database for the enclosing `describe`: opened in its
 * `beforeAll`, the second one closed in its `afterAll`. The array is filled when the suite's
 * tests run (use it inside them, not while the suite is declared).
 */
export function replicaDatabaseForSuite(engine: ReplicaDatabase): [Knex, Knex] {
  const knexes = [] as unknown as [Knex, Knex];
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const opened = await engine.open();
    knexes.push(...opened.knexes);
    close = opened.close;
  }, 60_000);
  afterAll(async () => close?.());
  return knexes;
}
