/*
 * The feed of access grants (docs/contracts/mcp-access.md §5.3) on SQLite and PostgreSQL, with
 * two stores ("replicas") on one database (two connection pools on PostgreSQL, as two processes
 * would have): one revision per write that changes something, none for one that changes
 * nothing, removals final, groups replaced and removed, concurrent writers serialised so that a
 * reader following the revisions misses nothing, a source's writer that prefixes and checks
 * what it is given, and the full sync (all pages or nothing; deltas during its walk win).
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';
import { AccessGrantFullSync } from '../grants/AccessGrantFullSync';
import { AccessGrantSources } from '../grants/AccessGrantSources';
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

  it('full sync: makes a source say what it lists, leaves rows written during its walk, and changes nothing when a page fails', async () => {
    const [a] = stores();
    const id = `sync-${Math.random().toString(36).slice(2, 8)}`;
    const writer = grantSourceWriter(id, a);
    const other = grantSourceWriter('other', a);
    const [kept, gone, added, late, revokedLate] = [1, 2, 3, 4, 5].map(() => testGrant());
    const foreign = testGrant();
    await writer.upsert([kept, gone, revokedLate]);
    await other.upsert([foreign]);

    // The source lists kept (with a new plan), added and revokedLate; between its two pages a
    // delta adds `late` and removes `revokedLate` (both after the walk began).
    let failAfterFirstPage = false;
    const pages: McpAccessGrant[][] = [[{ ...kept, plan: 'gold' }, added], [revokedLate]];
    const sources = new AccessGrantSources();
    sources.addGrantSource({
      id,
      async *listAll() {
        yield pages[0];
        if (failAfterFirstPage) throw new Error('the portal answered 503');
        await writer.upsert([late]);
        await writer.remove([revokedLate.id]);
        yield pages[1];
      },
      start: async () => undefined,
    });
    let written = 0;
    const sync = new AccessGrantFullSync({
      sources,
      store: a,
      logger: mockServices.logger.mock(),
      onWritten: async () => {
        written += 1;
      },
    });

    failAfterFirstPage = true;
    const before = await a.revision();
    await sync.run(new AbortController().signal);
    expect(await a.revision()).toBe(before);
    expect(written).toBe(0);

    failAfterFirstPage = false;
    await sync.run(new AbortController().signal);
    expect(written).toBe(1);
    const live = new Map((await a.loadLive()).grants.map(grant => [grant.id, grant]));
    const own = (grant: McpAccessGrant) => `${id}:${grant.id}`;
    expect(live.get(own(kept))?.plan).toBe('gold');
    expect(live.has(own(added))).toBe(true);
    expect(live.has(own(late))).toBe(true); // written after the walk began: left alone
    expect(live.has(own(gone))).toBe(false); // missing from the list: removed
    expect(live.has(own(revokedLate))).toBe(false); // removed during the walk: stays removed
    expect(live.has(`other:${foreign.id}`)).toBe(true); // another source's: untouched

    // A second run over an unchanged list spends no revision.
    pages.splice(0, 2, [{ ...kept, plan: 'gold' }, added, late], []);
    const settled = await a.revision();
    sources.list()[0].listAll = async function* listAgain() {
      yield pages[0];
    };
    await sync.run(new AbortController().signal);
    expect(await a.revision()).toBe(settled);
  });
});
