/*
 * The tier-in-use rule of contract mcp-access §3.3 as one atomic step of the database store
 * (SQLite and PostgreSQL): a product replace that drops a plan tier and an approval of that
 * tier never both succeed, whichever comes first and however they overlap. Before, the
 * service counted live grants and then wrote, and nothing stopped an approval in between (or
 * after): the broker then held a grant whose plan was gone.
 */
import { TestDatabases } from '@backstage/backend-test-utils';
import {
  MCP_TARGET_GROUP,
  OWNER_ANNOTATION,
  type ApiProductSpec,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { DatabasePortalStore } from './DatabasePortalStore';
import { DATABASE_ENGINES, describeSkippedEngine } from './testing/databaseEngines';
import type { PortalStore, StoredApiProduct } from './types';

const databases = TestDatabases.create({ ids: ['POSTGRES_15', 'SQLITE_3'] });
const OWNER = 'group:default/payments-team';
const NOW = new Date('2030-06-01T12:00:00Z');
/** Rounds of the race per test: each one a fresh request against a fresh product. */
const ROUNDS = 15;

const PLANS = [
  { tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' as const }] } },
  { tier: 'gold', limits: { toolCalls: [{ calls: 500, per: 'day' as const }] } },
];
const MCP_SPEC: ApiProductSpec = {
  displayName: 'Tools',
  targetRef: { group: MCP_TARGET_GROUP, kind: 'MCPServer', name: 'example' },
  approvalMode: 'manual',
  publishStatus: 'Published',
  plans: PLANS,
};

/** `product` with only the bronze plan: gold dropped, as the service's replace writes it. */
function withoutGold(product: StoredApiProduct): StoredApiProduct {
  return { ...product, spec: { ...product.spec, plans: [PLANS[0]] } };
}
const DROP_GOLD = { tiers: ['gold'], now: NOW };

/** What a promise came to: `ok`, or the name and message of its error. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: Error) => `${error.name}: ${error.message}`,
  );
}

for (const { id, label } of DATABASE_ENGINES) {
  if (!databases.supports(id)) {
    describeSkippedEngine(label, 'DatabasePortalStore tier-in-use');
    continue;
  }

  describe(`DatabasePortalStore on ${label}: dropping a plan tier against approving it`, () => {
    let store: PortalStore;
    let counter = 0;

    beforeAll(async () => {
      const knex = await databases.init(id);
      store = await DatabasePortalStore.create({
        database: { getClient: async () => knex, migrations: { skip: false } },
      });
    }, 60_000);

    async function product(): Promise<StoredApiProduct> {
      counter += 1;
      return store.createProduct({
        namespace: 'mcp',
        name: `tools-${counter}`,
        annotations: { [OWNER_ANNOTATION]: OWNER },
        spec: MCP_SPEC,
      });
    }
    async function request(of: StoredApiProduct, approved = false): Promise<ObjectRef> {
      const key = await store.createKey({
        namespace: of.metadata.namespace,
        spec: {
          apiProductRef: { name: of.metadata.name },
          planTier: 'gold',
          requestedBy: { userId: `user:default/person-${counter}` },
        },
        ...(approved && { approval: { reviewedBy: OWNER } }),
      });
      return key.metadata;
    }
    const approve = (key: ObjectRef) =>
      store.reviewKey(key, { phase: 'Approved', reviewedBy: OWNER });

    it('refuses to drop a tier a live grant uses, and leaves the product as it was', async () => {
      const tools = await product();
      await approve(await request(tools));
      await expect(store.replaceProduct(withoutGold(tools), DROP_GOLD)).rejects.toMatchObject({
        name: 'ConflictError',
        message: 'plan "gold" is used by 1 live access grant; revoke them or keep the plan',
      });
      const stored = await store.getProduct(tools.metadata);
      expect(stored?.metadata.resourceVersion).toBe(tools.metadata.resourceVersion);
      expect(stored?.spec.plans?.map(plan => plan.tier)).toEqual(['bronze', 'gold']);
    });

    it('drops a tier with only Pending requests, and then refuses to approve them', async () => {
      const tools = await product();
      const pending = await request(tools);
      await store.replaceProduct(withoutGold(tools), DROP_GOLD);
      await expect(approve(pending)).rejects.toMatchObject({
        name: 'ConflictError',
        message: expect.stringContaining(`no longer offers plan "gold"`),
      });
      expect((await store.getKey(pending))?.status.phase).toBe('Pending');
      // Nor is an approved request of the dropped tier created (automatic approval).
      await expect(request(tools, true)).rejects.toMatchObject({ name: 'ConflictError' });
      expect(await store.countLiveGrants(tools.metadata, 'gold', NOW)).toBe(0);
    });

    it('never lets a concurrent drop of a tier and an approval of it both succeed', async () => {
      const seen = new Set<string>();
      for (let round = 0; round < ROUNDS; round += 1) {
        const tools = await product();
        // Half the rounds approve a Pending request, half create one approved (automatic).
        const pending = round % 2 === 0 ? await request(tools) : undefined;
        const [replaced, approved] = await Promise.all([
          outcome(store.replaceProduct(withoutGold(tools), DROP_GOLD)),
          outcome(pending !== undefined ? approve(pending) : request(tools, true)),
        ]);
        seen.add(`${replaced} | ${approved}`);
        // Exactly one wins, and what is stored agrees with it.
        expect([replaced, approved].filter(o => o === 'ok')).toHaveLength(1);
        const tiers = (await store.getProduct(tools.metadata))?.spec.plans?.map(p => p.tier);
        const live = await store.countLiveGrants(tools.metadata, 'gold', NOW);
        expect({ tiers, live }).toEqual(
          replaced === 'ok'
            ? { tiers: ['bronze'], live: 0 }
            : { tiers: ['bronze', 'gold'], live: 1 },
        );
      }
      // The refusals are the two of the rule (whichever came first), nothing else.
      for (const pair of seen) {
        expect(pair).toMatch(
          /^(ok \| ConflictError: .*no longer offers plan "gold".*|ConflictError: plan "gold" is used by 1 live access grant; revoke them or keep the plan \| ok)$/,
        );
      }
    }, 60_000);
  });
}
