/*
 * The database engines the database store's tests run on: SQLite always, PostgreSQL when
 * BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set. Each test file makes its own
 * `TestDatabases` (it registers the file's hooks) and declares, for an engine it cannot reach,
 * the one test saying why.
 */
/* eslint-disable jest/no-export -- helpers of the database store's test files */

/** The variable that gives the tests a PostgreSQL server. */
export const POSTGRES_ENV = 'BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING';

/** The engines, by `TestDatabases` id, with a label for test names. */
export const DATABASE_ENGINES = [
  { id: 'SQLITE_3', label: 'SQLite' },
  { id: 'POSTGRES_15', label: 'PostgreSQL' },
] as const;

/** The one test of an engine that is not configured (fails should it be configured after all). */
export function describeSkippedEngine(label: string, suite: string): void {
  // eslint-disable-next-line no-console
  console.warn(`${suite} tests — ${label}: skipped, ${POSTGRES_ENV} not set`);
  describe(`${label}: skipped, ${POSTGRES_ENV} not set`, () => {
    it('is skipped only because no PostgreSQL server is configured', () => {
      expect(process.env[POSTGRES_ENV]).toBeFalsy();
    });
  });
}
