/*
 * The part of the PortalStore contract about targets (contract mcp-access §3.5, §4.8): the
 * product filter by target, the key's copy of its product's MCP target, the live grant list
 * (`listMcpGrantsPage`) and the live grant count of a plan tier (`countLiveGrants`). Run
 * inside runPortalStoreContract against every store (SQLite, PostgreSQL, the fake
 * Kubernetes API server).
 */
import {
  MCP_TARGET_GROUP,
  OWNER_ANNOTATION,
  type ApiKey,
  type ApiProductSpec,
  type McpTargetKind,
} from '@devportal/plugin-portal-common';
import type { McpGrantFilter, NewApiKey, PortalStore, StoredMcpGrant } from '../types';
import { walkPages } from './walkPages';

/** Generous: PostgreSQL and the fake API server create many records per test. */
const TEST_TIMEOUT_MS = 30_000;
const NOW = new Date('2030-06-01T12:00:00Z');
const ALICE = 'user:default/alice';
const CAROL = 'user:default/carol';
const PAYMENTS = 'group:default/payments-team';

const PLANS = [
  { tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' as const }] } },
  { tier: 'gold', limits: { toolCalls: [{ calls: 500, per: 'day' as const }] } },
];

function mcpSpec(kind: McpTargetKind, name: string): ApiProductSpec {
  return {
    displayName: `Tools of ${name}`,
    targetRef: { group: MCP_TARGET_GROUP, kind, name },
    approvalMode: 'manual',
    publishStatus: 'Published',
    plans: PLANS,
  };
}

function httpSpec(route: string): ApiProductSpec {
  return {
    displayName: 'Toy store',
    targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route },
    approvalMode: 'manual',
    publishStatus: 'Published',
  };
}

function keyNames(keys: ApiKey[]): string[] {
  return keys.map(key => key.metadata.name).sort();
}

function grantNames(grants: StoredMcpGrant[]): string[] {
  return keyNames(grants.map(grant => grant.key));
}

/** Defines the target tests over the store that `storeOf` gives for each test. */
// eslint-disable-next-line jest/no-export -- part of the shared store contract
export function describeMcpTargetContract(storeOf: () => PortalStore): void {
  describe('MCP targets and live grants', () => {
    let store: PortalStore;
    let counter = 0;

    beforeEach(async () => {
      store = storeOf();
      const product = (namespace: string, name: string, spec: ApiProductSpec) =>
        store.createProduct({
          namespace,
          name,
          annotations: { [OWNER_ANNOTATION]: PAYMENTS },
          spec,
        });
      await product('toystore', 'tools', mcpSpec('MCPServer', 'example'));
      await product('toystore', 'deploys', mcpSpec('MCPServer', 'deployer'));
      await product('other', 'ops', mcpSpec('MCPEndpoint', 'example'));
      await product('toystore', 'toys', httpSpec('toystore'));
    }, TEST_TIMEOUT_MS);

    /**
     * A request of `product` (namespace/name) by a requester of its own unless `requester`
     * is given: Approved unless `phase` says otherwise, expiring at `expiresAt`.
     */
    async function request(
      product: string,
      options: {
        tier?: string;
        requester?: string;
        expiresAt?: string;
        phase?: 'Approved' | 'Pending' | 'Rejected';
      } = {},
    ): Promise<ApiKey> {
      counter += 1;
      const [namespace, name] = product.split('/');
      const phase = options.phase ?? 'Approved';
      const newKey: NewApiKey = {
        namespace,
        spec: {
          apiProductRef: { name },
          planTier: options.tier ?? 'bronze',
          requestedBy: { userId: options.requester ?? `user:default/grant-${counter}` },
          ...(options.expiresAt !== undefined && { expiresAt: options.expiresAt }),
        },
        ...(phase === 'Approved' && { approval: { reviewedBy: PAYMENTS } }),
      };
      const key = await store.createKey(newKey);
      if (phase === 'Rejected') {
        return store.reviewKey(
          { namespace, name: key.metadata.name },
          { phase: 'Rejected', reviewedBy: PAYMENTS },
        );
      }
      return key;
    }

    async function allGrants(filter: McpGrantFilter = {}, limit = 100) {
      const pages = await walkPages(page => store.listMcpGrantsPage(filter, NOW, page), limit);
      return pages.flat();
    }

    it(
      "copies the product's MCP target into its access requests, and none into an API key",
      async () => {
        const access = await request('toystore/tools', { phase: 'Pending' });
        const endpoint = await request('other/ops');
        const key = await request('toystore/toys', { phase: 'Pending' });

        expect(access.spec.mcpTarget).toEqual({ kind: 'MCPServer', name: 'example' });
        expect(endpoint.spec.mcpTarget).toEqual({ kind: 'MCPEndpoint', name: 'example' });
        expect(key.spec.mcpTarget).toBeUndefined();
        const read = await store.getKey({ namespace: 'toystore', name: access.metadata.name });
        expect(read?.spec.mcpTarget).toEqual({ kind: 'MCPServer', name: 'example' });
        const listed = await store.listKeys({ namespace: 'toystore', productName: 'toys' });
        expect(listed.map(k => k.spec.mcpTarget)).toEqual([undefined]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'filters products by target kind, and by kind and name, in lists and pages',
      async () => {
        const names = async (filter: Parameters<PortalStore['listProducts']>[0]) => {
          const listed = (await store.listProducts(filter)).map(
            p => `${p.metadata.namespace}/${p.metadata.name}`,
          );
          const paged = (await walkPages(page => store.listProductsPage(filter, page), 1))
            .flat()
            .map(p => `${p.metadata.namespace}/${p.metadata.name}`);
          expect([...paged].sort()).toEqual([...listed].sort());
          return listed.sort();
        };

        expect(await names({ targetKind: 'MCPServer' })).toEqual([
          'toystore/deploys',
          'toystore/tools',
        ]);
        expect(await names({ targetKind: 'MCPServer', targetName: 'example' })).toEqual([
          'toystore/tools',
        ]);
        expect(await names({ targetKind: 'MCPEndpoint', targetName: 'example' })).toEqual([
          'other/ops',
        ]);
        expect(await names({ targetKind: 'MCPServer', targetName: 'nope' })).toEqual([]);
        expect(await names({ targetKind: 'HTTPRoute' })).toEqual(['toystore/toys']);
        expect(
          await names({ targetKind: 'MCPServer', namespace: 'other', ownerRefs: [PAYMENTS] }),
        ).toEqual([]);

        // An HTTPRoute product may move to another route; the filter follows.
        const toys = (await store.getProduct({ namespace: 'toystore', name: 'toys' }))!;
        await store.replaceProduct({ ...toys, spec: httpSpec('toystore-v2') });
        expect(await names({ targetKind: 'HTTPRoute', targetName: 'toystore' })).toEqual([]);
        expect(await names({ targetKind: 'HTTPRoute', targetName: 'toystore-v2' })).toEqual([
          'toystore/toys',
        ]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'lists only live grants: Approved, unexpired whatever the offset, of MCP products',
      async () => {
        const live = [
          await request('toystore/tools'),
          await request('toystore/tools', { tier: 'gold', expiresAt: '2030-06-01T12:01:00Z' }),
          // 10:30 at -02:00 is 12:30 UTC: live, although its text sorts before NOW's.
          await request('toystore/deploys', { expiresAt: '2030-06-01T10:30:00-02:00' }),
          await request('other/ops'),
        ];
        await request('toystore/tools', { expiresAt: '2030-06-01T11:59:00Z' });
        await request('toystore/tools', { expiresAt: NOW.toISOString() });
        // 12:30 at +02:00 is 10:30 UTC: expired, although its text sorts after NOW's.
        await request('toystore/tools', { expiresAt: '2030-06-01T12:30:00+02:00' });
        await request('toystore/tools', { phase: 'Pending' });
        await request('toystore/tools', { phase: 'Rejected' });
        await request('toystore/toys');

        const grants = await allGrants();

        expect(grantNames(grants)).toEqual(keyNames(live));
        for (const { key, product } of grants) {
          expect(product.metadata.namespace).toBe(key.metadata.namespace);
          expect(product.metadata.name).toBe(key.spec.apiProductRef.name);
          expect(product.spec.plans).toEqual(PLANS);
          expect(key.status.phase).toBe('Approved');
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'narrows the grant list by target, product, namespace and requester',
      async () => {
        const alicesTools = await request('toystore/tools', { requester: ALICE });
        const carolsTools = await request('toystore/tools', { requester: CAROL, tier: 'gold' });
        const alicesDeploys = await request('toystore/deploys', { requester: ALICE });
        const alicesOps = await request('other/ops', { requester: ALICE });

        const names = async (filter: McpGrantFilter) => grantNames(await allGrants(filter, 1));
        expect(await names({ targetKind: 'MCPServer', targetName: 'example' })).toEqual(
          keyNames([alicesTools, carolsTools]),
        );
        expect(await names({ targetKind: 'MCPServer' })).toEqual(
          keyNames([alicesTools, carolsTools, alicesDeploys]),
        );
        expect(await names({ targetKind: 'MCPEndpoint' })).toEqual(keyNames([alicesOps]));
        expect(await names({ namespace: 'toystore', productName: 'deploys' })).toEqual(
          keyNames([alicesDeploys]),
        );
        expect(await names({ namespace: 'other' })).toEqual(keyNames([alicesOps]));
        expect(await names({ requestedBy: ALICE, targetKind: 'MCPServer' })).toEqual(
          keyNames([alicesTools, alicesDeploys]),
        );
        expect(
          await names({ targetKind: 'MCPServer', targetName: 'example', requestedBy: CAROL }),
        ).toEqual(keyNames([carolsTools]));
        await expect(
          store.listMcpGrantsPage({ productName: 'tools' }, NOW, { limit: 10 }),
        ).rejects.toMatchObject({ name: 'InputError' });
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'pages the grant list without repeats or gaps, past expired keys and under concurrent inserts',
      async () => {
        const before: ApiKey[] = [];
        for (let i = 0; i < 6; i++) {
          before.push(await request('toystore/tools'));
          // Expired keys between the live ones: pages read past them.
          await request('toystore/tools', { expiresAt: '2030-06-01T11:00:00Z' });
          await request('toystore/tools', { expiresAt: '2030-06-01T12:30:00+02:00' });
        }
        const added: ApiKey[] = [];
        const pages = await walkPages(
          page => store.listMcpGrantsPage({}, NOW, page),
          2,
          async () => {
            added.push(await request('toystore/tools'));
          },
        );
        const seen = pages.flat().map(grant => grant.key.metadata.name);

        expect(new Set(seen).size).toBe(seen.length);
        expect(seen).toEqual(expect.arrayContaining(keyNames(before)));
        const known = new Set(keyNames([...before, ...added]));
        expect(seen.every(name => known.has(name))).toBe(true);
        // Pages are full except the last: expired keys do not shorten them.
        expect(pages.slice(0, -1).every(page => page.length === 2)).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'counts the live grants of one product and tier',
      async () => {
        await request('toystore/tools');
        await request('toystore/tools', { expiresAt: '2030-06-01T12:01:00Z' });
        await request('toystore/tools', { expiresAt: '2030-06-01T12:30:00+02:00' });
        await request('toystore/tools', { phase: 'Pending' });
        await request('toystore/tools', { phase: 'Rejected' });
        await request('toystore/tools', { tier: 'gold' });
        await request('toystore/deploys');

        const count = (name: string, tier: string) =>
          store.countLiveGrants({ namespace: 'toystore', name }, tier, NOW);
        expect(await count('tools', 'bronze')).toBe(2);
        expect(await count('tools', 'gold')).toBe(1);
        expect(await count('tools', 'silver')).toBe(0);
        expect(await count('deploys', 'bronze')).toBe(1);
        expect(await count('missing', 'bronze')).toBe(0);
      },
      TEST_TIMEOUT_MS,
    );
  });
}
