/*
 * Rate limits across replicas on SQLite and PostgreSQL (two connection pools on PostgreSQL, as
 * two processes would have): the quota store's atomic leases, then two RateLimiters ("replicas")
 * sharing one limit — within the stated tolerance, without a database round trip per call — and
 * a replica whose database calls fail enforcing its own share.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { readRateLimitConfig } from '../rateLimits/rateLimitConfig';
import { RateLimitRules } from '../rateLimits/RateLimitRules';
import { LEASE_SHARE, RateLimiter, type QuotaStore } from '../rateLimits/RateLimiter';
import { budgetKey, DatabaseQuotaStore, RATE_WINDOWS_TABLE } from './DatabaseQuotaStore';
import { DatabaseReplicaPresenceStore, REPLICAS_TABLE } from './DatabaseReplicaPresenceStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('rate limit store tests');
/** A multiple of a minute, far from any real window. */
const WINDOW_START = 1_800_000_000_000;
const WINDOW_END = WINDOW_START + 60_000;

/** Counts the store's calls, and can fail them as a lost connection would (a test double). */
class CountingQuotaStore implements QuotaStore {
  leases = 0;
  failing = false;
  constructor(private readonly inner: QuotaStore) {}
  #check() {
    if (this.failing) throw new Error('connection terminated (the test cut it)');
  }
  async lease(budget: string, windowEnd: number, limit: number, wanted: number) {
    this.#check();
    this.leases += 1;
    return this.inner.lease(budget, windowEnd, limit, wanted);
  }
  async record(budget: string, windowEnd: number, units: number) {
    this.#check();
    return this.inner.record(budget, windowEnd, units);
  }
  async liveReplicas(now: number) {
    this.#check();
    return this.inner.liveReplicas(now);
  }
}

describe.each(engines)('rate limits on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  let budgetCounter = 0;
  const freshBudget = () => `test-budget-${(budgetCounter += 1)}-${Math.random()}`;

  describe('DatabaseQuotaStore', () => {
    it('grants concurrent leases from two replicas up to the limit and never beyond', async () => {
      const [a, b] = knexes.map(knex => new DatabaseQuotaStore(knex));
      const budget = freshBudget();
      const grants = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).lease(budget, WINDOW_END, 100, 7)),
      );
      expect(grants.reduce((sum, g) => sum + g, 0)).toBe(100);
      // Every lease got what it asked for while the window had it, then the rest, then nothing.
      expect(grants.filter(g => g === 7)).toHaveLength(14);
      expect(grants.filter(g => g === 2)).toHaveLength(1);
      expect(grants.filter(g => g === 0)).toHaveLength(25);
      // Each window counts apart; a lease never grants more than the limit.
      expect(await a.lease(budget, WINDOW_END + 60_000, 5, 50)).toBe(5);
    });

    it('adds recorded units even beyond the limit (then nothing more is leased)', async () => {
      const store = new DatabaseQuotaStore(knexes[0]);
      const budget = freshBudget();
      expect(await store.lease(budget, WINDOW_END, 10, 6)).toBe(6);
      await store.record(budget, WINDOW_END, 7);
      expect(await store.lease(budget, WINDOW_END, 10, 1)).toBe(0);
      const row = await knexes[1](RATE_WINDOWS_TABLE).where({ window_end: WINDOW_END }).first();
      expect(row).toBeDefined();
    });

    it('counts live replicas from their presence marks and sweeps ended windows and replicas', async () => {
      const [a, b] = knexes.map(knex => new DatabaseQuotaStore(knex));
      const [presenceA, presenceB] = knexes.map(knex => new DatabaseReplicaPresenceStore(knex));
      const now = WINDOW_START;
      await knexes[0](REPLICAS_TABLE).delete();
      await presenceA.beat('replica-a', now + 10_000, now);
      expect(await a.liveReplicas(now)).toBe(1);
      await presenceB.beat('replica-b', now + 10_000, now);
      expect(await b.liveReplicas(now)).toBe(2);
      await presenceA.beat('replica-a', now + 11_000, now + 1_000);
      expect(await a.liveReplicas(now + 1_000)).toBe(2);
      // B stopped beating: once its mark lapsed it no longer counts, and the next beat drops it.
      await presenceA.beat('replica-a', now + 20_000, now + 10_000);
      expect(await a.liveReplicas(now + 10_000)).toBe(1);
      expect(await knexes[1](REPLICAS_TABLE).pluck('replica_id')).toEqual(['replica-a']);
      // A replica that stops cleanly removes its mark at once.
      await presenceA.leave('replica-a');
      expect(await a.liveReplicas(now + 10_000)).toBe(0);
      const budget = freshBudget();
      await a.lease(budget, now + 60_000, 10, 1);
      await a.liveReplicas(now + 60_000);
      expect(await knexes[1](RATE_WINDOWS_TABLE).where({ window_end: now + 60_000 })).toEqual([]);
    });
  });

  describe('two replicas sharing a limit', () => {
    const clock = { now: WINDOW_START + 5_000 };
    let limiters: RateLimiter[] = [];
    let stores: CountingQuotaStore[] = [];

    /** Two limiters on the two connections, each knowing the other is alive. */
    async function twoReplicas(rateLimits: unknown) {
      await knexes[0](REPLICAS_TABLE).delete();
      const config = readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never))!;
      stores = knexes.map(knex => new CountingQuotaStore(new DatabaseQuotaStore(knex)));
      // Both replicas are present (their ReplicaPresence would keep these marks current).
      for (const [i, knex] of knexes.entries()) {
        await new DatabaseReplicaPresenceStore(knex).beat(
          `replica-${i}`,
          clock.now + 3_600_000,
          clock.now,
        );
      }
      limiters = stores.map(store =>
        RateLimiter.create({
          rules: RateLimitRules.of(config),
          store,
          logger: mockServices.logger.mock(),
          now: () => clock.now,
          // A loaded test machine may take long for a statement: that is not what is tested here.
          leaseWaitMs: 30_000,
        }),
      );
      for (const limiter of limiters) await limiter.tick();
      for (const limiter of limiters) await limiter.tick();
      expect(limiters.map(l => l.liveReplicas)).toEqual([2, 2]);
      return { limiters, config };
    }

    afterEach(() => {
      for (const limiter of limiters) limiter.close();
      clock.now += 60_000; // every test in a window of its own
    });

    const person = (name: string) => ({ principal: `user:user:default/${name}`, groups: [] });

    it('holds the limit for a person whose calls land on both, within the tolerance, with one round trip per lease', async () => {
      const {
        limiters: [a, b],
      } = await twoReplicas({ default: { calls: 200, per: '1m' } });
      const alice = person('alice');
      let admitted = 0;
      // Uneven: two of three calls on A; 300 calls in all, 50 at a time.
      for (let batch = 0; batch < 6; batch += 1) {
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            ((batch * 50 + i) % 3 === 2 ? b : a).admit(alice, { server: 's', tool: 't' }),
          ),
        );
        admitted += results.filter(r => r.admitted).length;
      }
      expect(admitted).toBeLessThanOrEqual(200);
      expect(admitted).toBeGreaterThanOrEqual(200 * (1 - LEASE_SHARE));
      // Leases of 20 (a tenth of the limit for the one other replica), plus the refusals' look-ups.
      const leases = stores[0].leases + stores[1].leases;
      expect(leases).toBeLessThan(30);
      // Bob is not touched by Alice's spent budget.
      expect((await b.admit(person('bob'), { server: 's', tool: 't' })).admitted).toBe(true);
    });

    it('keeps enforcing its own share on a replica whose database calls fail, and records it once they work again', async () => {
      const {
        limiters: [a, b],
        config,
      } = await twoReplicas({ default: { calls: 40, per: '1m' } });
      const alice = person('alice');
      stores[1].failing = true;
      const onB = [];
      for (let i = 0; i < 30; i += 1) onB.push(await b.admit(alice, { server: 's', tool: 't' }));
      // Half of 40 for each of the two live replicas; the refusal says when the window ends.
      expect(onB.filter(r => r.admitted)).toHaveLength(20);
      const windowEnd = (Math.floor(clock.now / 60_000) + 1) * 60_000;
      expect(onB[29]).toMatchObject({ admitted: false, retryAfterMs: windowEnd - clock.now });

      // A, on the database, still counts the whole limit it can lease.
      let onA = 0;
      for (let i = 0; i < 50; i += 1)
        onA += (await a.admit(alice, { server: 's', tool: 't' })).admitted ? 1 : 0;
      expect(onA).toBe(40);

      // B's database answers again (after the retry interval): its 20 are added to the count.
      stores[1].failing = false;
      clock.now += 1_500;
      const again = await b.admit(alice, { server: 's', tool: 't' });
      expect(again.admitted).toBe(false);
      const [budget] = RateLimitRules.of(config).limitsFor(alice, { server: 's', tool: 't' });
      const rows = await knexes[0](RATE_WINDOWS_TABLE)
        .select('used')
        .where({ budget: budgetKey(budget.budget), window_end: windowEnd });
      expect(rows.map(r => Number(r.used))).toEqual([60]);
    });
  });
});
