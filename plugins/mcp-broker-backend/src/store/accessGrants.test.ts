/*
 * The feed of access grants (docs/contracts/mcp-access.md §5.3) on SQLite and PostgreSQL, with
 * two stores ("replicas") on one database (two connection pools on PostgreSQL, as two processes
 * would have): one revision per write that changes something, none for one that changes
 * nothing, removals final, groups replaced and removed, concurrent writers serialised so that a
 * reader following the revisions misses nothing, and a source's writer that prefixes and checks
 * what it is given.
 */
import { grantSourceWriter } from '../grants/grantSourceWriter';
import { testGrant } from '../grants/__testUtils__/testGrant';
import { ACCESS_GRANTS_TABLE, DatabaseAccessGrantStore } from './DatabaseAccessGrantStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('access grant store tests');

describe.each(engines)('access grants on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  const stores = () => knexes.map(knex => new DatabaseAccessGrantStore(knex));

  it('writes a revision per change, none for a write that changes nothing, and reads what changed since', async () => {
    const [a, b] = stores();
    const start = (await b.readSince(0)).revision;
    const alice = testGrant({ group: 'g-rev', subject: 'user:default/Alice' });
    const first = await a.upsert([alice]);
    expect(first).toEqual({ revision: start + 1 });
    // The same again: nothing written, no revision spent.
    expect(await a.upsert([alice])).toBeUndefined();
    expect((await b.readSince(start)).revision).toBe(start + 1);
    // A changed plan is a change.
    expect(await b.upsert([{ ...alice, plan: 'silver' }])).toEqual({ revision: start + 2 });
    const since = await a.readSince(start);
    expect(since.changes).toEqual([
      expect.objectContaining({
        id: alice.id,
        subject: 'user:default/alice', // stored in lower case
        plan: 'silver',
        limits: [{ calls: 10, windowMs: 60_000 }],
        links: { manage: '/portal/keys' },
        revision: start + 2,
      }),
    ]);
    expect(since.changes[0].removedAt).toBeUndefined();
    expect((await a.loadLive()).grants.map(g => g.id)).toContain(alice.id);
  });

  it('keeps a removed grant removed: a late upsert of its id is ignored', async () => {
    const [a, b] = stores();
    const revoked = testGrant({ group: 'g-final' });
    await a.upsert([revoked]);
    const removed = await b.remove([revoked.id, 'never-existed']);
    expect(removed).toBeDefined();
    expect(await a.remove([revoked.id])).toBeUndefined(); // already removed: nothing changes
    expect(await a.upsert([revoked])).toBeUndefined();
    const row = (await a.readSince(removed!.revision - 1)).changes.find(g => g.id === revoked.id);
    expect(row?.removedAt).toEqual(expect.any(Number));
    expect((await b.loadLive()).grants.map(g => g.id)).not.toContain(revoked.id);
  });

  it('replaces a group (removing its others) and removes a group', async () => {
    const [a, b] = stores();
    const [one, two, three] = [1, 2, 3].map(() => testGrant({ group: 'g-replace' }));
    await a.upsert([one, two]);
    const replaced = await b.replaceGroup('g-replace', [{ ...two, plan: 'gold' }, three]);
    const changes = (await a.readSince(replaced!.revision - 1)).changes;
    expect(changes.map(g => [g.id, g.plan, g.removedAt === undefined])).toEqual(
      expect.arrayContaining([
        [one.id, 'bronze', false],
        [two.id, 'gold', true],
        [three.id, 'bronze', true],
      ]),
    );
    expect(changes).toHaveLength(3);
    await b.removeGroup('g-replace');
    const live = (await a.loadLive()).grants.filter(g => g.group === 'g-replace');
    expect(live).toEqual([]);
  });

  it('serialises concurrent writers of two replicas: every change gets its own revision, and a reader misses none', async () => {
    const [a, b] = stores();
    const start = (await a.readSince(0)).revision;
    const grants = Array.from({ length: 20 }, () => testGrant({ group: 'g-concurrent' }));
    const results = await Promise.all(grants.map((g, i) => (i % 2 ? a : b).upsert([g])));
    const revisions = results.map(r => r!.revision).sort((x, y) => x - y);
    expect(revisions).toEqual(Array.from({ length: 20 }, (_, i) => start + i + 1));
    const read = await a.readSince(start);
    expect(read.revision).toBe(start + 20);
    expect(new Set(read.changes.map(g => g.id))).toEqual(new Set(grants.map(g => g.id)));
  });

  it('gives a source a writer that prefixes its ids and groups and refuses malformed grants whole', async () => {
    const [a] = stores();
    const writer = grantSourceWriter('portal', a);
    const good = testGrant({ group: 'default/prefixed' });
    await writer.upsert([good]);
    const stored = await knexes[0](ACCESS_GRANTS_TABLE)
      .where({ id: `portal:${good.id}` })
      .first();
    expect(stored).toMatchObject({ group_ref: 'portal:default/prefixed' });
    const before = (await a.readSince(0)).revision;
    await expect(
      writer.upsert([testGrant(), testGrant({ subject: 'group:default/team' })]),
    ).rejects.toThrow(/subject must be a user entity ref/);
    await expect(
      writer.upsert([testGrant({ target: { kind: 'server', name: 'Not A Name' } })]),
    ).rejects.toThrow(/target.name must be a broker server or endpoint name/);
    await expect(
      writer.upsert([testGrant({ limits: [{ calls: 1.5, windowMs: 1000 }] })]),
    ).rejects.toThrow(/calls, a whole number/);
    await expect(writer.replaceGroup('default/other', [good])).rejects.toThrow(/another group/);
    expect((await a.readSince(0)).revision).toBe(before); // nothing was written
    await writer.remove([good.id]);
    expect((await a.loadLive()).grants.map(g => g.id)).not.toContain(`portal:${good.id}`);
    expect(() => grantSourceWriter('Portal!', a)).toThrow(/Invalid MCP access grant source id/);
  });
});
