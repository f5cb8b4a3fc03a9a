/*
 * Usage counts (docs/contracts/mcp-access.md §7.2) on SQLite and PostgreSQL, with two recorders
 * ("replicas") flushing into one table (two connection pools on PostgreSQL): flushes add up, a
 * failed flush keeps its counts for the next one without counting twice, memory is bounded, the
 * reads the pages use (totals, series, people paged by calls), and the retention sweep.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { UsageRecorder } from '../usage/UsageRecorder';
import { UsageRetention } from '../usage/UsageRetention';
import type { UsageRow, UsageStore } from '../usage/UsageStore';
import { DatabaseUsageStore, USAGE_DAILY_TABLE } from './DatabaseUsageStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('usage store tests');

const NOON = Date.UTC(2026, 11, 6, 12);
const TODAY = '2026-12-06';
const WHOLE_DAY = { from: TODAY, to: TODAY };

/** A store whose writes fail while `failing` is set (the database being unreachable). */
class FailingUsageStore implements UsageStore {
  failing = true;
  writes = 0;
  constructor(private readonly inner: UsageStore) {}
  async add(rows: readonly UsageRow[]) {
    this.writes += 1;
    if (this.failing) throw new Error('connection refused');
    return this.inner.add(rows);
  }
  rowsOf: UsageStore['rowsOf'] = (...args) => this.inner.rowsOf(...args);
  serverTotals: UsageStore['serverTotals'] = (...args) => this.inner.serverTotals(...args);
  seriesOf: UsageStore['seriesOf'] = (...args) => this.inner.seriesOf(...args);
  peopleOf: UsageStore['peopleOf'] = (...args) => this.inner.peopleOf(...args);
  deleteBefore: UsageStore['deleteBefore'] = (...args) => this.inner.deleteBefore(...args);
}

function recorder(store: UsageStore, maxPendingKeys?: number) {
  return UsageRecorder.create({
    store,
    logger: mockServices.logger.mock(),
    flushIntervalMs: 60_000,
    now: () => NOON,
    ...(maxPendingKeys === undefined ? {} : { maxPendingKeys }),
  });
}

describe.each(engines)('usage on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  afterEach(async () => {
    await knexes[0](USAGE_DAILY_TABLE).delete();
  });

  it('adds the flushes of two recorders into one row per day, person, server and tool', async () => {
    const [a, b] = knexes.map(knex => new DatabaseUsageStore(knex));
    const replicaA = recorder(a);
    const replicaB = recorder(b);
    const echo = { principal: 'user:default/alice', server: 'example', tool: 'echo' };
    for (let i = 0; i < 3; i += 1) replicaA.record(echo, 'succeeded');
    replicaA.record(echo, 'failed');
    replicaB.record(echo, 'succeeded');
    replicaB.record(echo, 'rate-limited');
    replicaB.record({ ...echo, tool: 'count' }, 'succeeded');
    // Both replicas flush at once, then A flushes again after more calls.
    await Promise.all([replicaA.flush(), replicaB.flush()]);
    replicaA.record(echo, 'succeeded');
    await replicaA.flush();
    expect(replicaA.pendingKeys()).toBe(0);
    expect(await a.rowsOf('user:default/alice', WHOLE_DAY)).toEqual([
      {
        day: TODAY,
        principal: 'user:default/alice',
        server: 'example',
        tool: 'count',
        calls: 1,
        errors: 0,
        rateLimited: 0,
      },
      {
        day: TODAY,
        principal: 'user:default/alice',
        server: 'example',
        tool: 'echo',
        calls: 6,
        errors: 1,
        rateLimited: 1,
      },
    ]);
  });

  it('keeps the counts of a failed flush and writes them, once, with the next one', async () => {
    const failing = new FailingUsageStore(new DatabaseUsageStore(knexes[0]));
    const replica = recorder(failing);
    const call = { principal: 'user:default/bob', server: 'example', tool: 'echo' };
    replica.record(call, 'succeeded');
    await replica.flush();
    expect(failing.writes).toBe(1);
    expect(replica.pendingKeys()).toBe(1);
    replica.record(call, 'failed');
    failing.failing = false;
    await replica.flush();
    await replica.flush(); // nothing pending: nothing written twice
    expect(await failing.rowsOf('user:default/bob', WHOLE_DAY)).toEqual([
      expect.objectContaining({ tool: 'echo', calls: 2, errors: 1, rateLimited: 0 }),
    ]);
  });

  it('bounds the pending keys: new keys beyond the bound are dropped, known keys keep counting', async () => {
    const store = new DatabaseUsageStore(knexes[0]);
    const replica = recorder(store, 2);
    const call = (tool: string) => ({ principal: 'user:default/carol', server: 'example', tool });
    replica.record(call('a'), 'succeeded');
    replica.record(call('b'), 'succeeded');
    replica.record(call('c'), 'succeeded'); // a third key: dropped
    replica.record(call('a'), 'succeeded');
    expect(replica.pendingKeys()).toBe(2);
    await replica.flush();
    const rows = await store.rowsOf('user:default/carol', WHOLE_DAY);
    expect(rows.map(row => [row.tool, row.calls])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    // After a flush there is room again.
    replica.record(call('c'), 'succeeded');
    expect(replica.pendingKeys()).toBe(1);
  });

  it('answers totals per server, a series per day and tool, and people paged by calls', async () => {
    const store = new DatabaseUsageStore(knexes[0]);
    await store.add([
      {
        day: '2026-12-05',
        principal: 'user:default/alice',
        server: 'example',
        tool: 'echo',
        calls: 2,
        errors: 0,
        rateLimited: 0,
      },
      {
        day: TODAY,
        principal: 'user:default/alice',
        server: 'example',
        tool: 'echo',
        calls: 1,
        errors: 1,
        rateLimited: 1,
      },
      {
        day: TODAY,
        principal: 'user:default/bob',
        server: 'example',
        tool: 'count',
        calls: 3,
        errors: 0,
        rateLimited: 0,
      },
      {
        day: TODAY,
        principal: 'user:default/dave',
        server: 'example',
        tool: 'echo',
        calls: 3,
        errors: 0,
        rateLimited: 0,
      },
      {
        day: TODAY,
        principal: 'service:external:ci',
        server: 'other',
        tool: 'x',
        calls: 9,
        errors: 0,
        rateLimited: 0,
      },
    ]);
    const range = { from: '2026-12-05', to: TODAY };
    expect(await store.serverTotals(range)).toEqual([
      { server: 'example', calls: 9, errors: 1, rateLimited: 1, people: 3 },
      { server: 'other', calls: 9, errors: 0, rateLimited: 0, people: 1 },
    ]);
    expect(await store.seriesOf('example', range)).toEqual([
      { day: '2026-12-05', tool: 'echo', calls: 2, errors: 0, rateLimited: 0 },
      { day: TODAY, tool: 'count', calls: 3, errors: 0, rateLimited: 0 },
      { day: TODAY, tool: 'echo', calls: 4, errors: 1, rateLimited: 1 },
    ]);
    const first = await store.peopleOf('example', range, 2);
    expect(first.map(p => [p.principal, p.calls, p.lastDay])).toEqual([
      ['user:default/alice', 3, TODAY],
      ['user:default/bob', 3, TODAY],
    ]);
    const next = await store.peopleOf('example', range, 2, first[1]);
    expect(next.map(p => p.principal)).toEqual(['user:default/dave']);
    // Only the period counts.
    expect(
      (await store.peopleOf('example', WHOLE_DAY, 10)).find(
        p => p.principal === 'user:default/alice',
      )?.calls,
    ).toBe(1);
  });

  it('deletes the rows older than the retention', async () => {
    const store = new DatabaseUsageStore(knexes[0]);
    const row = {
      principal: 'user:default/alice',
      server: 'example',
      tool: 'echo',
      calls: 1,
      errors: 0,
      rateLimited: 0,
    };
    await store.add([
      { ...row, day: '2026-09-06' }, // 91 days before today: gone
      { ...row, day: '2026-09-07' }, // 90 days before today: kept
      { ...row, day: TODAY },
    ]);
    expect(await new UsageRetention(store, 90).deleteExpired(NOON)).toBe(1);
    const left = await store.rowsOf('user:default/alice', { from: '2026-01-01', to: TODAY });
    expect(left.map(r => r.day)).toEqual(['2026-09-07', TODAY]);
  });
});
