/*
 * The connection budget check at start, on a real Backstage backend (startTestBackend) with two
 * plugins that use the database and the real PostgreSQL of `yarn test`: it warns when this
 * replica's pools cannot fit in the server's max_connections, and logs the sum otherwise. The
 * root logger is Backstage's mock (to read what was logged); everything else is real.
 */
import {
  coreServices,
  createBackendPlugin,
  type LoggerService,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { backendDatabases } from '../testing/backendDatabases';
import { budgetedDatabaseServiceFactory } from './budgetedDatabaseServiceFactory';

const postgres = backendDatabases('connection budget check').find(d => d.name === 'PostgreSQL');

function pluginUsingTheDatabase(pluginId: string) {
  return createBackendPlugin({
    pluginId,
    register(env) {
      env.registerInit({
        deps: { database: coreServices.database },
        async init({ database }) {
          await (await database.getClient()).raw('select 1');
        },
      });
    },
  });
}

/** Starts a backend with two such plugins and pools of `poolMax`; returns what was logged. */
async function startWithPools(poolMax: number) {
  const lines: Array<{ level: 'info' | 'warn'; message: string }> = [];
  const logger = {
    info: (message: string) => lines.push({ level: 'info', message }),
    warn: (message: string) => lines.push({ level: 'warn', message }),
    error: () => {},
    debug: () => {},
  } as unknown as LoggerService;
  (logger as { child: unknown }).child = () => logger;
  const backend = await startTestBackend({
    features: [
      budgetedDatabaseServiceFactory({
        ownPools: [{ name: 'budget-one (its own)', pluginId: 'budget-one', max: () => 1 }],
      }),
      mockServices.rootConfig.factory({
        data: {
          backend: {
            database: { ...postgres!.config, knexConfig: { pool: { min: 0, max: poolMax } } },
          },
        },
      }),
      mockServices.rootLogger.mock({ child: () => logger }).factory,
      pluginUsingTheDatabase('budget-one'),
      pluginUsingTheDatabase('budget-two'),
    ],
  });
  await backend.stop();
  return lines.filter(line => /PostgreSQL (connection budget|cannot hold)/.test(line.message));
}

if (postgres === undefined) {
  describe('connection budget check: skipped, no PostgreSQL configured', () => {
    it('is skipped only because BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set', () => {
      expect(process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING).toBeFalsy();
    });
  });
} else {
  describe('the database service warns at start when max_connections cannot hold the pools', () => {
    afterAll(() => postgres.cleanup(), 60_000);

    it('logs the sum of the pools when the server can hold them', async () => {
      const lines = await startWithPools(2);
      expect(lines).toEqual([
        {
          level: 'info',
          message: expect.stringContaining(
            "this replica's 3 connection pools may open 5 connections " +
              '(budget-one 2, budget-two 2, budget-one (its own) 1)',
          ),
        },
      ]);
    }, 60_000);

    it('warns, naming the figures and the config key, when they cannot fit', async () => {
      // More than any server this suite runs on allows (CI: 300, a developer's: 1000).
      const lines = await startWithPools(5000);
      expect(lines).toEqual([
        {
          level: 'warn',
          message: expect.stringMatching(
            /^PostgreSQL cannot hold this replica's connection pools: this replica's 3 connection pools may open 10001 connections .*the server accepts \d+ \(max_connections \d+ minus \d+ reserved\).*backend\.database\.knexConfig\.pool\.max/,
          ),
        },
      ]);
    }, 60_000);
  });
}
