/*
 * MCP products and their access requests (contract mcp-access §3–§4): the real services over
 * the database store on SQLite and PostgreSQL, with MCP targets looked up through
 * CatalogMcpTargetDirectory in Backstage's in-memory catalog (`catalogServiceMock`: a test
 * double, the real catalog runs in packages/backend's end-to-end tests). Permission decisions
 * come from a mock: bob and dave are in payments-team (the example server's owner), carol
 * holds portal.apiproduct.update.all, alice holds neither.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { mockServices, TestDatabases } from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import type { EventsService } from '@backstage/plugin-events-node';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  type CreateApiProductRequest,
  MCP_SERVER_ANNOTATION,
  OWNER_ANNOTATION,
  type PortalEventPayload,
} from '@devportal/plugin-portal-common';
import type { Knex } from 'knex';
import path from 'node:path';
import { CatalogMcpTargetDirectory } from '../mcp/McpTargetDirectory';
import { productOwnerApproval } from '../permissions/testing';
import { ManifestResourceSource } from '../resources/ManifestResourceSource';
import { DatabasePortalStore } from '../store/DatabasePortalStore';
import { AuthorizedPortalService } from './AuthorizedPortalService';
import { DefaultPortalService } from './DefaultPortalService';
import { McpGrantReader } from './McpGrantReader';
import { PortalEventPublisher } from './PortalEventPublisher';
import { refOfKey } from './records';
import { credentialsOf as as, testActors } from './__testUtils__/testActors';

const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
const PAYMENTS = 'group:default/payments-team';
const BOB = { userRef: 'user:default/bob', ownershipRefs: ['user:default/bob', PAYMENTS] };
const DAVE = { userRef: 'user:default/dave', ownershipRefs: ['user:default/dave', PAYMENTS] };
const CAROL = { userRef: 'user:default/carol', ownershipRefs: ['user:default/carol'] };
const ALICE = { userRef: 'user:default/alice', ownershipRefs: ['user:default/alice'] };
const ADMINS = [CAROL.userRef];
const USERS = [BOB, DAVE, CAROL, ALICE];
/** Permissions only admins hold; everyone holds the rest (approval: see authorizeConditional). */
const ADMIN_ONLY = [
  'portal.apiproduct.update.all',
  'portal.apikey.delete.all',
  'portal.apikey.read.all',
  'portal.mcpgrant.list',
];
/** The event the portal publishes about a key of the example server's product. */
const keyEvent = (
  type: string,
  key: { metadata: { name: string; uid: string } },
  actor: string,
) => ({
  type,
  ref: { namespace: 'mcp', name: key.metadata.name },
  actor,
  product: { namespace: 'mcp', name: 'example-tools' },
  target: { kind: 'MCPServer', name: 'example' },
  uid: key.metadata.uid,
});

const userOf = (options?: { credentials: BackstageCredentials }) =>
  (options?.credentials.principal as { userEntityRef: string }).userEntityRef;

const EXAMPLE_SERVER: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'API',
  metadata: {
    namespace: 'default',
    name: 'mcp-server-example',
    title: 'Example MCP server',
    annotations: { [MCP_SERVER_ANNOTATION]: 'example' },
  },
  spec: { type: 'mcp-server', lifecycle: 'production', owner: PAYMENTS, definition: '{}' },
};

const PLANS = [
  { tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' as const }] } },
  {
    tier: 'gold',
    description: 'for teams that deploy',
    limits: {
      toolCalls: [
        { calls: 100, per: 'day' as const },
        { calls: 10, per: 'minute' as const, tools: ['deploy'] },
      ],
    },
  },
];

const mcpProduct = (
  overrides: Partial<CreateApiProductRequest['spec']> = {},
  annotations?: Record<string, string>,
): CreateApiProductRequest => ({
  metadata: { namespace: 'mcp', name: 'example-tools', ...(annotations && { annotations }) },
  spec: {
    displayName: 'Example tools',
    targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' },
    plans: PLANS,
    publishStatus: 'Published',
    ...overrides,
  },
});

const databases = TestDatabases.create({ ids: ['SQLITE_3', 'POSTGRES_15'] });

describe.each(['SQLITE_3', 'POSTGRES_15'] as const)(
  'MCP products and access requests (database store on %s)',
  databaseId => {
    let knex: Knex;
    let catalog: CatalogService;
    let published: PortalEventPayload[];
    let service: DefaultPortalService;
    let authorized: AuthorizedPortalService;

    const build = async (catalogService: CatalogService) => {
      const actors = testActors(USERS);
      const events = {
        publish: async ({ eventPayload }: { eventPayload: unknown }) => {
          published.push(eventPayload as PortalEventPayload);
        },
      } as unknown as EventsService;
      service = DefaultPortalService.create({
        store: await DatabasePortalStore.create({ database: mockServices.database({ knex }) }),
        resources: await ManifestResourceSource.fromFiles([TOYSTORE]),
        actors,
        events: PortalEventPublisher.create({ events, logger: mockServices.logger.mock() }),
        mcpTargets: CatalogMcpTargetDirectory.create({
          catalog: catalogService,
          auth: mockServices.auth(),
        }),
      });
      authorized = AuthorizedPortalService.create({
        service,
        actors,
        permissions: mockServices.permissions.mock({
          authorize: async (requests, options?: { credentials: BackstageCredentials }) => {
            const user = userOf(options);
            return requests.map(({ permission }) => ({
              result:
                !ADMIN_ONLY.includes(permission.name) || ADMINS.includes(user)
                  ? AuthorizeResult.ALLOW
                  : AuthorizeResult.DENY,
            })) as any;
          },
          // The api-owner policy of the fixture: approve keys of products one owns.
          authorizeConditional: async (
            queries,
            options?: { credentials: BackstageCredentials },
          ) => {
            const user = userOf(options);
            const claims = USERS.find(u => u.userRef === user)?.ownershipRefs ?? [user];
            return queries.map(() =>
              ADMINS.includes(user)
                ? { result: AuthorizeResult.ALLOW }
                : productOwnerApproval(claims),
            ) as any;
          },
        }),
      });
    };

    beforeEach(async () => {
      if (!databases.supports(databaseId)) return;
      knex = await databases.init(databaseId);
      published = [];
      catalog = catalogServiceMock({ entities: [EXAMPLE_SERVER] });
      await build(catalog);
    });

    const skipUnlessSupported = () => {
      if (!databases.supports(databaseId)) {
        // eslint-disable-next-line no-console
        console.warn(`${databaseId}: skipped, its connection string is not set`);
        return true;
      }
      return false;
    };

    it("lets the server's owners and admins create an MCP product, owned by the server's owner", async () => {
      if (skipUnlessSupported()) return;
      const byBob = await authorized.createProduct(as(BOB), mcpProduct());
      expect(byBob.metadata.annotations?.[OWNER_ANNOTATION]).toBe(PAYMENTS);
      expect(byBob.status?.plans.map(plan => plan.tier)).toEqual(['bronze', 'gold']);
      expect(byBob.status?.plans[1]).toEqual({
        tier: 'gold',
        description: 'for teams that deploy',
        limits: PLANS[1].limits,
      });
      const byDave = await authorized.createProduct(as(DAVE), {
        ...mcpProduct({}, { [OWNER_ANNOTATION]: 'group:default/Payments-Team' }),
        metadata: {
          namespace: 'mcp',
          name: 'by-dave',
          annotations: { [OWNER_ANNOTATION]: 'group:default/Payments-Team' },
        },
      });
      expect(byDave.metadata.annotations?.[OWNER_ANNOTATION]).toBe(PAYMENTS);
      const byCarol = await authorized.createProduct(as(CAROL), {
        ...mcpProduct(),
        metadata: { namespace: 'mcp', name: 'by-carol' },
      });
      expect(byCarol.metadata.annotations?.[OWNER_ANNOTATION]).toBe(PAYMENTS);
    });

    it("refuses others with 403 naming the server's owner, and another owner with 400", async () => {
      if (skipUnlessSupported()) return;
      await expect(authorized.createProduct(as(ALICE), mcpProduct())).rejects.toMatchObject({
        name: 'NotAllowedError',
        message: `only the owners of MCP server "example" (${PAYMENTS}) may offer it as a product`,
      });
      await expect(
        authorized.createProduct(as(BOB), mcpProduct({}, { [OWNER_ANNOTATION]: BOB.userRef })),
      ).rejects.toMatchObject({
        name: 'InputError',
        message: expect.stringContaining(
          `the owner of an MCP product is its server's owner (${PAYMENTS})`,
        ),
      });
    });

    it('checks plans against the kind of target and the target against the catalog', async () => {
      if (skipUnlessSupported()) return;
      await expect(
        service.createProduct(
          as(BOB),
          mcpProduct({
            targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
          }),
        ),
      ).rejects.toThrow(
        'spec.plans: an HTTPRoute product takes its plans from the PlanPolicies of its route; remove spec.plans',
      );
      await expect(
        service.createProduct(as(BOB), mcpProduct({ plans: undefined })),
      ).rejects.toThrow('spec.plans: an MCP product needs at least one plan');
      await expect(
        service.createProduct(as(BOB), mcpProduct({ plans: [PLANS[0], PLANS[0]] })),
      ).rejects.toThrow('spec.plans[0] and spec.plans[1] both have tier "bronze"');
      await expect(
        service.createProduct(
          as(BOB),
          mcpProduct({
            plans: [
              {
                tier: 'x',
                limits: {
                  toolCalls: [
                    { calls: 1, per: 'day', tools: ['a', 'b'] },
                    { calls: 2, per: 'day', tools: ['b', 'a'] },
                  ],
                },
              },
            ],
          }),
        ),
      ).rejects.toThrow('spec.plans[0].limits.toolCalls[0] and [1] count the same tools per day');
      await expect(
        service.createProduct(
          as(BOB),
          mcpProduct({ targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'nope' } }),
        ),
      ).rejects.toMatchObject({
        name: 'InputError',
        message:
          'spec.targetRef: no MCP server "nope" in the catalog (the broker publishes its servers there within seconds of adding them)',
      });
    });

    it('answers 503 when the catalog cannot be asked', async () => {
      if (skipUnlessSupported()) return;
      const failing = catalogServiceMock.mock({
        getEntities: async () => {
          throw new Error('connect ECONNREFUSED');
        },
      });
      await build(failing);
      await expect(service.createProduct(as(BOB), mcpProduct())).rejects.toMatchObject({
        name: 'ServiceUnavailableError',
      });
    });

    it("never changes an MCP product's target, and lets its plans be replaced", async () => {
      if (skipUnlessSupported()) return;
      const product = await service.createProduct(as(BOB), mcpProduct());
      const ref = product.metadata;
      await expect(
        service.updateProduct(as(CAROL), ref, {
          spec: { targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'other' } },
        }),
      ).rejects.toThrow('spec.targetRef of an MCP product cannot change');
      await expect(
        service.updateProduct(as(CAROL), ref, {
          spec: {
            targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
          },
        }),
      ).rejects.toThrow('spec.targetRef of an MCP product cannot change');
      const updated = await service.updateProduct(as(BOB), ref, { spec: { plans: [PLANS[1]] } });
      expect(updated.status?.plans.map(plan => plan.tier)).toEqual(['gold']);
      expect((await service.getProduct(as(ALICE), ref)).spec.plans).toEqual([PLANS[1]]);
    });

    it('refuses plans on an HTTPRoute product in a patch too', async () => {
      if (skipUnlessSupported()) return;
      const product = await service.createProduct(as(BOB), {
        metadata: { namespace: 'toystore', name: 'toys' },
        spec: {
          displayName: 'Toys',
          targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
        },
      });
      await expect(
        service.updateProduct(as(BOB), product.metadata, { spec: { plans: PLANS } }),
      ).rejects.toThrow('spec.plans: an HTTPRoute product takes its plans');
    });

    it('approves an access request without issuing a secret; the reveal answers 409 naming why', async () => {
      if (skipUnlessSupported()) return;
      const product = await service.createProduct(as(BOB), mcpProduct());
      await expect(
        service.createRequest(as(ALICE), { apiProductRef: product.metadata, planTier: 'silver' }),
      ).rejects.toThrow('planTier "silver" is not offered by APIProduct mcp/example-tools');
      const key = await service.createRequest(as(ALICE), {
        apiProductRef: product.metadata,
        planTier: 'bronze',
      });
      expect(key.status.phase).toBe('Pending');
      const approved = await service.reviewRequest(as(BOB), refOfKey(key), 'approve', 'welcome');
      expect(approved.status).toMatchObject({ phase: 'Approved', secretRevealed: false });
      const [{ n }] = await knex('portal_api_key_secrets').count({ n: '*' });
      expect(Number(n)).toBe(0);

      const refusal = `APIKey mcp/${key.metadata.name} grants access to MCP server "example": no secret is issued; connect your MCP client to the broker and sign in as yourself`;
      await expect(service.revealSecret(as(ALICE), refOfKey(key))).rejects.toMatchObject({
        name: 'ConflictError',
        message: refusal,
      });
      const after = await service.listMyRequests(as(ALICE), {});
      expect(after.items[0].status.secretRevealed).toBe(false);

      expect(published.map(event => event.type)).toEqual([
        'apiproduct.created',
        'apikey.requested',
        'apikey.approved',
      ]);
      expect(published[2]).toEqual(keyEvent('apikey.approved', key, BOB.userRef));
    });

    it('approves at once without a secret in automatic mode, and refuses requests once the server is gone', async () => {
      if (skipUnlessSupported()) return;
      const product = await service.createProduct(
        as(BOB),
        mcpProduct({ approvalMode: 'automatic' }),
      );
      const key = await service.createRequest(as(ALICE), {
        apiProductRef: product.metadata,
        planTier: 'gold',
      });
      expect(key.status.phase).toBe('Approved');
      const [{ n }] = await knex('portal_api_key_secrets').count({ n: '*' });
      expect(Number(n)).toBe(0);

      await build(catalogServiceMock({ entities: [] }));
      await expect(
        service.createRequest(as(DAVE), { apiProductRef: product.metadata, planTier: 'bronze' }),
      ).rejects.toMatchObject({
        name: 'ConflictError',
        message: `MCP server "example" does not exist (any more); ask the product's owners`,
      });
    });

    it("lets the product's owners and admins revoke an approved access request, not its requester", async () => {
      if (skipUnlessSupported()) return;
      const product = await service.createProduct(as(BOB), mcpProduct());
      const request = async () =>
        service.createRequest(as(ALICE), { apiProductRef: product.metadata, planTier: 'bronze' });
      const pending = await request();
      await expect(
        authorized.revokeRequest(as(BOB), refOfKey(pending), 'too early'),
      ).rejects.toMatchObject({
        name: 'ConflictError',
        message: expect.stringContaining('is Pending; only Approved keys can be revoked'),
      });
      await service.reviewRequest(as(BOB), refOfKey(pending), 'approve');

      await expect(authorized.revokeRequest(as(ALICE), refOfKey(pending))).rejects.toMatchObject({
        name: 'NotAllowedError',
        message: expect.stringContaining(`revoking APIKey mcp/${pending.metadata.name} needs`),
      });
      published.length = 0;
      await authorized.revokeRequest(as(DAVE), refOfKey(pending), 'audit');
      expect(published).toEqual([keyEvent('apikey.revoked', pending, DAVE.userRef)]);
      await expect(authorized.revokeRequest(as(DAVE), refOfKey(pending))).rejects.toMatchObject({
        name: 'NotFoundError',
      });

      const second = await request();
      await service.reviewRequest(as(BOB), refOfKey(second), 'approve');
      await authorized.revokeRequest(as(CAROL), refOfKey(second));
      expect((await service.listMyRequests(as(ALICE), {})).items).toEqual([]);
    });

    it('lists live grants (Approved, unexpired, with the current plan), pages them, and reads one', async () => {
      if (skipUnlessSupported()) return;
      const product = await service.createProduct(as(BOB), mcpProduct());
      const request = (who: typeof ALICE, planTier: string, expiresAt?: string) =>
        service.createRequest(as(who), {
          apiProductRef: product.metadata,
          planTier,
          ...(expiresAt && { expiresAt }),
        });
      const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
      const alice = await request(ALICE, 'bronze');
      const dave = await request(DAVE, 'gold', inAnHour);
      const carol = await request(CAROL, 'bronze');
      const pending = await request(BOB, 'bronze');
      for (const key of [alice, dave, carol]) {
        await service.reviewRequest(as(BOB), refOfKey(key), 'approve');
      }
      const rejected = await request(CAROL, 'gold');
      await service.reviewRequest(as(BOB), refOfKey(rejected), 'reject');

      // In the order of P§9: creation time, namespace, name (keys made in one instant by name).
      const byPosition = (keys: Array<typeof alice>) =>
        keys
          .map(key => `${key.metadata.creationTimestamp} ${key.metadata.name}`)
          .sort()
          .map(position => position.split(' ')[1]);
      const all = await authorized.listMcpGrants(as(CAROL), {});
      expect(all.items.map(grant => grant.key.name)).toEqual(byPosition([alice, dave, carol]));
      const grantOf = (key: typeof alice) =>
        all.items.find(grant => grant.key.name === key.metadata.name);
      expect(grantOf(dave)).toEqual({
        key: { namespace: 'mcp', name: dave.metadata.name, uid: dave.metadata.uid },
        product: { namespace: 'mcp', name: 'example-tools', displayName: 'Example tools' },
        target: { kind: 'MCPServer', name: 'example' },
        subject: DAVE.userRef,
        tier: 'gold',
        limits: PLANS[1].limits,
        approvedAt: expect.any(String),
        expiresAt: inAnHour,
      });

      const first = await authorized.listMcpGrants(as(CAROL), {}, { limit: 2 });
      expect(first.items).toHaveLength(2);
      const second = await authorized.listMcpGrants(
        as(CAROL),
        {},
        { limit: 2, cursor: first.cursor },
      );
      expect(second).toEqual({ items: [all.items[2]] });
      expect((await authorized.listMcpGrants(as(CAROL), { subject: ALICE.userRef })).items).toEqual(
        [grantOf(alice)],
      );
      expect(
        (await authorized.listMcpGrants(as(CAROL), { targetKind: 'MCPEndpoint' })).items,
      ).toEqual([]);

      // A plan change shows in the grants at once; a grant past its expiry is gone.
      await service.updateProduct(as(BOB), product.metadata, {
        spec: { plans: [PLANS[0], { tier: 'gold', limits: { toolCalls: [] } }] },
      });
      expect((await authorized.getMcpGrant(as(CAROL), refOfKey(dave))).limits).toEqual({
        toolCalls: [],
      });
      const later = new McpGrantReader(
        await DatabasePortalStore.create({ database: mockServices.database({ knex }) }),
        () => new Date(Date.now() + 2 * 3_600_000),
      );
      expect((await later.list({})).items.map(grant => grant.key.name)).toEqual(
        byPosition([alice, carol]),
      );
      await expect(later.get(refOfKey(dave))).rejects.toMatchObject({ name: 'NotFoundError' });

      for (const key of [pending, rejected]) {
        await expect(authorized.getMcpGrant(as(CAROL), refOfKey(key))).rejects.toMatchObject({
          name: 'NotFoundError',
          message: expect.stringContaining('is not a live access grant'),
        });
      }
      await expect(authorized.listMcpGrants(as(ALICE), {})).rejects.toMatchObject({
        name: 'NotAllowedError',
        message: 'reading MCP access grants needs portal.mcpgrant.list',
      });
      await expect(
        authorized.listMcpGrants(as(CAROL), {}, { limit: 2, cursor: 'nonsense' }),
      ).rejects.toMatchObject({ name: 'InputError' });
    });
  },
);
