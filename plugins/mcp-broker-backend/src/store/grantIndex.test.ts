/*
 * A replica's GrantIndex following the feed written by another (docs/contracts/mcp-access.md
 * §5.4), on SQLite and PostgreSQL with two connection pools on PostgreSQL, as two processes
 * would have: changes read by revision, expiry without the database, failing closed when the
 * feed was not read for too long, and a restart that keeps access.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';
import { GrantIndex, type GrantChange } from '../grants/GrantIndex';
import { testGrant } from '../grants/__testUtils__/testGrant';
import { DatabaseAccessGrantStore } from './DatabaseAccessGrantStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('grant index tests');

/** A grant of `subject` (see testGrant). */
const grant = (subject: string, overrides: Partial<McpAccessGrant> = {}) =>
  testGrant({ subject, limits: [], ...overrides });

/** Resolves with the next change `index` announces that satisfies `matches`. */
function nextChange(index: GrantIndex, matches: (c: GrantChange) => boolean) {
  return new Promise<GrantChange>(resolve => {
    const stop = index.onChange(change => {
      if (!matches(change)) return;
      stop();
      resolve(change);
    });
  });
}

describe.each(engines)('GrantIndex on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  const indexes: GrantIndex[] = [];
  afterEach(async () => {
    await Promise.all(indexes.splice(0).map(index => index.close()));
  });

  async function replicaIndex(options: { now?: () => number; staleAfterMs?: number } = {}) {
    const logger = mockServices.logger.mock();
    const index = await GrantIndex.create({
      store: new DatabaseAccessGrantStore(knexes[1]),
      logger,
      pollMs: 3_600_000, // the tests refresh when they mean to
      ...options,
    });
    indexes.push(index);
    return { index, logger };
  }

  it('follows another replica’s writes by revision: grants appear and go, versions change', async () => {
    const writer = new DatabaseAccessGrantStore(knexes[0]);
    const { index } = await replicaIndex();
    const subject = `user:default/follow-${Math.random().toString(36).slice(2)}`;
    const before = index.versionOf(subject);
    const first = grant(subject, { approvedAt: 2 });
    const older = grant(subject, { approvedAt: 1, target: { kind: 'server', name: 'other' } });
    await writer.upsert([first, older]);
    expect(index.grantsOf(subject)).toEqual([]); // not read yet
    const announced = nextChange(index, c => c !== 'all' && c.includes(subject));
    await index.refresh();
    await announced;
    // Oldest approval first; the subject compared without case.
    expect(index.grantsOf(subject.toUpperCase()).map(g => g.id)).toEqual([older.id, first.id]);
    const granted = index.versionOf(subject);
    expect(granted).not.toBe(before);
    await writer.remove([older.id]);
    await index.refresh();
    expect(index.grantsOf(subject).map(g => g.id)).toEqual([first.id]);
    expect(index.versionOf(subject)).not.toBe(granted);
    // Another subject's change leaves this one's version alone.
    const version = index.versionOf(subject);
    await writer.upsert([grant('user:default/someone-else')]);
    await index.refresh();
    expect(index.versionOf(subject)).toBe(version);
  });

  // Waits for a real instant: the grant must still be live when the index has read it (a
  // margin of 3 s for a loaded machine), and the wait for it to pass needs more than Jest's 5 s.
  it('lets a grant expire at its instant, without the database', async () => {
    const writer = new DatabaseAccessGrantStore(knexes[0]);
    const { index } = await replicaIndex();
    const subject = `user:default/expiring-${Math.random().toString(36).slice(2)}`;
    await writer.upsert([grant(subject, { expiresAt: Date.now() + 3_000 })]);
    await index.refresh();
    expect(index.grantsOf(subject)).toHaveLength(1);
    const version = index.versionOf(subject);
    await nextChange(index, c => c !== 'all' && c.includes(subject));
    expect(index.grantsOf(subject)).toEqual([]);
    expect(index.versionOf(subject)).not.toBe(version);
  }, 30_000);

  it('fails closed when the feed was not read for too long, and recovers at the next read', async () => {
    const clock = { now: Date.now() };
    const writer = new DatabaseAccessGrantStore(knexes[0]);
    const subject = `user:default/stale-${Math.random().toString(36).slice(2)}`;
    await writer.upsert([grant(subject)]);
    const { index, logger } = await replicaIndex({ now: () => clock.now, staleAfterMs: 15_000 });
    expect(index.grantsOf(subject)).toHaveLength(1);
    const fresh = index.versionOf(subject);
    const all = nextChange(index, c => c === 'all');
    clock.now += 15_001;
    expect(index.grantsOf(subject)).toEqual([]);
    await all;
    expect(index.versionOf(subject)).not.toBe(fresh);
    expect(index.counts().fresh).toBe(false);
    index.grantsOf(subject);
    expect(logger.warn).toHaveBeenCalledTimes(1); // once per episode
    await index.refresh();
    expect(index.grantsOf(subject)).toHaveLength(1);
    expect(index.counts().fresh).toBe(true);
  });

  it('keeps access across a restart: a new index loads the live grants', async () => {
    const writer = new DatabaseAccessGrantStore(knexes[0]);
    const subject = `user:default/restart-${Math.random().toString(36).slice(2)}`;
    const kept = grant(subject);
    const gone = grant(subject);
    await writer.upsert([kept, gone]);
    await writer.remove([gone.id]);
    const { index } = await replicaIndex();
    expect(index.grantsOf(subject).map(g => g.id)).toEqual([kept.id]);
  });
});
