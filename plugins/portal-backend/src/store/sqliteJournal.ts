import type { LoggerService } from '@backstage/backend-plugin-api';
import type { Knex } from 'knex';

/**
 * On SQLite, switches the database to the write-ahead log (`PRAGMA journal_mode = WAL`);
 * does nothing on other databases. Returns the journal mode in force afterwards
 * (`undefined` off SQLite).
 *
 * Why: with SQLite's default rollback journal every commit costs several fsyncs, and
 * each review, reveal and request is its own transaction — a bulk approval of 100 keys
 * took 1.2–2.6 s on a file database here and ~0.25 s with the write-ahead log (see
 * docs/benchmarks.md). Readers then also stop blocking the writer. The mode is stored in
 * the database file, so it holds for every connection; an in-memory database stays in
 * `memory` mode.
 *
 * Best effort: a file system that cannot hold a write-ahead log (some network file
 * systems) keeps the rollback journal, which is slower but correct, so a failure is
 * logged and start-up goes on.
 */
export async function preferWriteAheadLog(
  knex: Knex,
  logger?: LoggerService,
): Promise<string | undefined> {
  if (knex.client.dialect !== 'sqlite3') {
    return undefined;
  }
  try {
    const rows: Array<{ journal_mode: string }> = await knex.raw('PRAGMA journal_mode = WAL');
    const mode = rows[0]?.journal_mode;
    if (mode !== 'wal' && mode !== 'memory') {
      logger?.warn(
        `The portal's SQLite database stays in journal mode ${mode}: writes are slower than with the write-ahead log`,
      );
    }
    return mode;
  } catch (error) {
    logger?.warn(
      `Could not switch the portal's SQLite database to the write-ahead log; writes stay on the slower rollback journal: ${String(error)}`,
    );
    return undefined;
  }
}
