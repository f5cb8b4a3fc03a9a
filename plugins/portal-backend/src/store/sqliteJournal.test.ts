import { mockServices } from '@backstage/backend-test-utils';
import knexFactory, { type Knex } from 'knex';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DatabasePortalStore } from './DatabasePortalStore';
import { preferWriteAheadLog } from './sqliteJournal';

describe('the SQLite journal mode of the portal store', () => {
  let directory: string;
  const opened: Knex[] = [];

  function sqliteFile(): Knex {
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename: path.join(directory, 'portal.sqlite') },
      useNullAsDefault: true,
    });
    opened.push(knex);
    return knex;
  }

  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-journal-'));
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map(knex => knex.destroy()));
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('switches a file database to the write-ahead log when the store starts, for every later connection', async () => {
    const knex = sqliteFile();
    const before: Array<{ journal_mode: string }> = await knex.raw('PRAGMA journal_mode');
    expect(before[0].journal_mode).toBe('delete');

    await DatabasePortalStore.create({ database: { getClient: async () => knex } });

    // The mode lives in the file: a connection opened afterwards sees it too.
    const other: Array<{ journal_mode: string }> = await sqliteFile().raw('PRAGMA journal_mode');
    expect(other[0].journal_mode).toBe('wal');
    expect(fs.existsSync(path.join(directory, 'portal.sqlite-wal'))).toBe(true);
  });

  it('leaves an in-memory database in memory mode', async () => {
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: ':memory:',
      useNullAsDefault: true,
    });
    opened.push(knex);
    expect(await preferWriteAheadLog(knex)).toBe('memory');
  });

  it('does nothing on PostgreSQL (no query is sent)', async () => {
    // A listener of ours that counts connections and drops them: a query would have to connect.
    let connections = 0;
    const listener = net.createServer(socket => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>(resolve => listener.listen(0, '127.0.0.1', resolve));
    try {
      const knex = knexFactory({
        client: 'pg',
        connection: {
          host: '127.0.0.1',
          port: (listener.address() as net.AddressInfo).port,
          user: 'nobody',
          database: 'none',
        },
      });
      opened.push(knex);
      const logger = mockServices.logger.mock();
      await expect(preferWriteAheadLog(knex, logger)).resolves.toBeUndefined();
      expect(logger.warn).not.toHaveBeenCalled();
      expect(connections).toBe(0);
    } finally {
      await new Promise(resolve => listener.close(resolve));
    }
  });

  it('logs and goes on when the journal mode cannot be changed', async () => {
    const knex = sqliteFile();
    await knex.raw('SELECT 1');
    // A second connection in the middle of a write transaction holds the lock that
    // switching to the write-ahead log needs.
    const holder = sqliteFile();
    await holder.raw('CREATE TABLE t (x integer)');
    const logger = mockServices.logger.mock();
    await holder.transaction(async trx => {
      await trx.raw('INSERT INTO t VALUES (1)');
      await expect(preferWriteAheadLog(knex, logger)).resolves.toBeUndefined();
    });
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining('stay on the slower rollback journal'),
    );
  });
});
