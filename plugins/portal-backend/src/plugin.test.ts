/*
 * The portal plugin in a test backend with MOCKED auth, user info, permissions and
 * auditor (real SQLite store, real manifest files): details that the real-backend tests
 * in packages/backend cannot observe — how many permission round trips a request makes,
 * how a conditional approval is applied per item, what the audit trail records, and how
 * the plugin behaves when the permission framework allows everything.
 */
import path from 'node:path';
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type AuthorizePermissionRequest,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import request from 'supertest';
import { productOwnerApproval } from './permissions/testing';
import { portalPlugin } from './plugin';

const TOYSTORE_MANIFEST = path.resolve(__dirname, '..', '..', '..', 'examples', 'toystore.yaml');
const ROUTE = {
  group: 'gateway.networking.k8s.io',
  kind: 'HTTPRoute',
  name: 'toystore',
};

const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
const CAROL = 'user:default/carol';
const TEAM_A = 'group:default/team-a';

const GROUPS: Record<string, string[]> = { [BOB]: [TEAM_A] };

/** A small policy: alice consumes, bob owns team-a's APIs (conditional approval), carol is admin. */
const CONSUMER = [
  'portal.apiproduct.list',
  'portal.apiproduct.read.all',
  'portal.apikey.create',
  'portal.apikey.read.own',
  'portal.apikey.update.own',
  'portal.apikey.delete.own',
];
const GRANTS: Record<string, string[]> = {
  [ALICE]: CONSUMER,
  [BOB]: [...CONSUMER, 'portal.apiproduct.create', 'portal.apiproduct.update.own'],
};

function userOf(options?: { credentials?: BackstageCredentials }): string | undefined {
  return (options?.credentials?.principal as { userEntityRef?: string } | undefined)?.userEntityRef;
}

async function startPortal(options: { allowEverything?: boolean } = {}) {
  const authorize = jest.fn(
    async (
      requests: AuthorizePermissionRequest[],
      opts?: { credentials?: BackstageCredentials },
    ) => {
      const user = userOf(opts);
      return requests.map(({ permission }) => ({
        result:
          options.allowEverything ||
          user === CAROL ||
          (user !== undefined && GRANTS[user]?.includes(permission.name))
            ? AuthorizeResult.ALLOW
            : AuthorizeResult.DENY,
      })) as any;
    },
  );
  const authorizeConditional = jest.fn(
    async (queries: unknown[], opts?: { credentials?: BackstageCredentials }) => {
      const user = userOf(opts);
      return queries.map((): PolicyDecision => {
        if (options.allowEverything || user === CAROL) return { result: AuthorizeResult.ALLOW };
        if (user === BOB) return productOwnerApproval([BOB, TEAM_A]);
        return { result: AuthorizeResult.DENY };
      }) as any;
    },
  );
  const events: Array<{
    eventId: string;
    meta?: unknown;
    outcome?: string;
    error?: string;
  }> = [];
  const auditor = mockServices.auditor.mock({
    createEvent: jest.fn(async ({ eventId, meta }) => {
      const event: (typeof events)[number] = { eventId, meta };
      events.push(event);
      return {
        success: async (params?: { meta?: unknown }) => {
          event.outcome = 'succeeded';
          if (params?.meta)
            event.meta = {
              ...(event.meta as object),
              ...(params.meta as object),
            };
        },
        fail: async ({ error }: { error: Error }) => {
          event.outcome = 'failed';
          event.error = error.name;
        },
      };
    }),
  });
  const { server } = await startTestBackend({
    features: [
      portalPlugin,
      mockServices.rootConfig.factory({
        data: {
          portal: { manifests: [TOYSTORE_MANIFEST] },
          permission: { enabled: !options.allowEverything },
        },
      }),
      mockServices.permissions.mock({ authorize, authorizeConditional }).factory,
      mockServices.userInfo.mock({
        getUserInfo: async (credentials: BackstageCredentials) => {
          const userEntityRef = (credentials.principal as { userEntityRef: string }).userEntityRef;
          return {
            userEntityRef,
            ownershipEntityRefs: [userEntityRef, ...(GROUPS[userEntityRef] ?? [])],
          };
        },
      }).factory,
      auditor.factory,
    ],
  });
  const as = (user: string) => ({
    Authorization: mockCredentials.user.header(user),
  });
  const api = {
    get: (p: string, user: string) => request(server).get(`/api/portal${p}`).set(as(user)),
    post: (p: string, user: string, body: object = {}) =>
      request(server).post(`/api/portal${p}`).set(as(user)).send(body),
    delete: (p: string, user: string) => request(server).delete(`/api/portal${p}`).set(as(user)),
  };
  const product = async (name: string, owner?: string, user = CAROL) => {
    const response = await api.post('/apiproducts', user, {
      metadata: {
        namespace: 'toystore',
        name,
        ...(owner && { annotations: { 'backstage.io/owner': owner } }),
      },
      spec: { displayName: name, targetRef: ROUTE, publishStatus: 'Published' },
    });
    expect(response.status).toBe(201);
  };
  const keyRequest = async (productName: string, user = ALICE, planTier = 'gold') => {
    const response = await api.post('/requests', user, {
      apiProductRef: { namespace: 'toystore', name: productName },
      planTier,
    });
    expect(response.status).toBe(201);
    return response.body.metadata.name as string;
  };
  return {
    server,
    api,
    authorize,
    authorizeConditional,
    events,
    product,
    keyRequest,
  };
}

describe('portal plugin (mocked auth, permissions and auditor; real SQLite store)', () => {
  // Found by the fuzzer (packages/backend/src/e2e/fuzzPortalRoutes.test.ts): a path no route
  // matches fell through to Backstage's root handler, a 404 with an empty body.
  it("answers a path or method outside its routes with 404 and Backstage's error body", async () => {
    const portal = await startPortal();
    for (const answer of [
      await portal.api.get('/apiproducts/toystore', ALICE),
      await portal.api.get('/nothing-here', ALICE),
      await portal.api.post('/apiproducts/toystore/x', ALICE),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        error: expect.objectContaining({ name: 'NotFoundError', message: expect.any(String) }),
        request: expect.anything(),
        response: { statusCode: 404 },
      });
    }
  });

  it('asks .all and .own of a family in one authorize call per request', async () => {
    const portal = await startPortal();
    portal.authorize.mockClear();
    expect((await portal.api.get('/requests', ALICE)).status).toBe(200);
    expect(portal.authorize).toHaveBeenCalledTimes(1);
    expect(portal.authorize.mock.calls[0][0].map(r => r.permission.name)).toEqual([
      'portal.apikey.read.all',
      'portal.apikey.read.own',
    ]);
  });

  it('applies one conditional approval decision to each item of a bulk call', async () => {
    const portal = await startPortal();
    await portal.product('team-product', TEAM_A, BOB);
    await portal.product('carols-product');
    const teamKey = await portal.keyRequest('team-product');
    const carolsKey = await portal.keyRequest('carols-product');
    const bobsOwnKey = await portal.keyRequest('carols-product', BOB);
    portal.authorizeConditional.mockClear();

    const response = await portal.api.post('/requests/bulk-approve', BOB, {
      requests: [teamKey, carolsKey, bobsOwnKey].map(name => ({
        namespace: 'toystore',
        name,
      })),
    });
    expect(response.status).toBe(200);
    expect(portal.authorizeConditional).toHaveBeenCalledTimes(1);
    expect(response.body.results.map((r: any) => r.success || r.error.statusCode)).toEqual([
      true, // team-a owns the product: the condition holds
      404, // bob can neither approve nor read alice's key for carol's product
      403, // bob can read his own request but the condition does not hold
    ]);
    expect(response.body.results[0].apiKey.status).toMatchObject({
      phase: 'Approved',
      reviewedBy: BOB,
    });
  });

  it('audits every change and secret reveal with its outcome, never the secret', async () => {
    const portal = await startPortal();
    await portal.product('audited', TEAM_A, BOB);
    const key = await portal.keyRequest('audited');
    expect((await portal.api.post(`/requests/toystore/${key}/approve`, BOB)).status).toBe(200);
    expect((await portal.api.post(`/requests/toystore/${key}/approve`, BOB)).status).toBe(409);
    const secret = await portal.api.get(`/apikeys/toystore/${key}/secret`, ALICE);
    expect(secret.status).toBe(200);
    expect(secret.headers['cache-control']).toBe('no-store');

    expect(portal.events.map(e => [e.eventId, e.outcome, e.error])).toEqual([
      ['apiproduct-create', 'succeeded', undefined],
      ['apikey-request-create', 'succeeded', undefined],
      ['apikey-request-review', 'succeeded', undefined],
      ['apikey-request-review', 'failed', 'ConflictError'],
      ['apikey-secret-reveal', 'succeeded', undefined],
    ]);
    expect(portal.events[2].meta).toMatchObject({
      namespace: 'toystore',
      name: key,
      decision: 'approve',
    });
    expect(JSON.stringify(portal.events)).not.toContain(secret.body.apiKey);
  });

  it('registers the portal-apikey resource type, whose IS_PRODUCT_OWNER rule decides on stored keys', async () => {
    const portal = await startPortal();
    const metadata = await portal.api.get('/.well-known/backstage/permissions/metadata', CAROL);
    expect(metadata.body.rules).toEqual([
      expect.objectContaining({
        name: 'IS_PRODUCT_OWNER',
        resourceType: 'portal-apikey',
      }),
    ]);

    await portal.product('conditions', TEAM_A, BOB);
    const key = await portal.keyRequest('conditions');
    const condition = (claims: string[]) => ({
      rule: 'IS_PRODUCT_OWNER',
      resourceType: 'portal-apikey',
      params: { claims },
    });
    const applied = await request(portal.server)
      .post('/api/portal/.well-known/backstage/permissions/apply-conditions')
      .set({ Authorization: mockCredentials.service.header() })
      .send({
        items: [
          {
            id: '1',
            resourceType: 'portal-apikey',
            resourceRef: `toystore/${key}`,
            conditions: condition([TEAM_A]),
          },
          {
            id: '2',
            resourceType: 'portal-apikey',
            resourceRef: `toystore/${key}`,
            conditions: condition([BOB]),
          },
        ],
      });
    expect(applied.status).toBe(200);
    expect(applied.body.items).toEqual([
      { id: '1', result: AuthorizeResult.ALLOW },
      { id: '2', result: AuthorizeResult.DENY },
    ]);
  });

  it('treats every user as admin when the permission framework allows everything (permission.enabled: false)', async () => {
    const portal = await startPortal({ allowEverything: true });
    const erin = 'user:default/erin';
    await portal.product('open', undefined, ALICE);
    const key = await portal.keyRequest('open', ALICE);
    expect((await portal.api.post(`/requests/toystore/${key}/approve`, erin)).status).toBe(200);
    expect((await portal.api.get(`/apikeys/toystore/${key}/secret`, erin)).status).toBe(200);
    // Service principals stay read-only even then.
    const service = await request(portal.server)
      .post('/api/portal/requests')
      .set({ Authorization: mockCredentials.service.header() })
      .send({
        apiProductRef: { namespace: 'toystore', name: 'open' },
        planTier: 'gold',
      });
    expect(service.status).toBe(403);
  });

  it('filters keys by product, product owner and requester, and products by owner; a .own caller is only narrowed', async () => {
    const portal = await startPortal();
    await portal.product('team-api', TEAM_A, BOB);
    await portal.product('carol-api');
    const aliceTeam = await portal.keyRequest('team-api', ALICE);
    const aliceOwn = await portal.keyRequest('carol-api', ALICE);
    const carolTeam = await portal.keyRequest('team-api', CAROL);
    const names = async (route: string, user: string) => {
      const response = await portal.api.get(route, user);
      expect({ route, status: response.status }).toEqual({ route, status: 200 });
      return response.body.items.map((item: { metadata: { name: string } }) => item.metadata.name);
    };
    const team = encodeURIComponent(TEAM_A);
    // carol (read.all): every filter on every key.
    expect((await names(`/requests?owner=${team}`, CAROL)).sort()).toEqual(
      [aliceTeam, carolTeam].sort(),
    );
    expect((await names(`/requests?requester=${ALICE}`, CAROL)).sort()).toEqual(
      [aliceTeam, aliceOwn].sort(),
    );
    expect(await names('/requests?namespace=toystore&product=carol-api', CAROL)).toEqual([
      aliceOwn,
    ]);
    expect(await names(`/requests?owner=${team}&requester=${CAROL}&status=Pending`, CAROL)).toEqual(
      [carolTeam],
    );
    // bob (read.own, team-a owns team-api): his products' keys; another owner adds nothing.
    expect((await names(`/requests?owner=${team},${BOB}`, BOB)).sort()).toEqual(
      [aliceTeam, carolTeam].sort(),
    );
    expect(await names(`/requests?owner=${CAROL}`, BOB)).toEqual([]);
    // alice (read.own): her own requests only, whoever owns the product.
    expect(await names(`/requests?owner=${team}`, ALICE)).toEqual([aliceTeam]);
    // Products by owner.
    expect(await names(`/apiproducts?owner=${team}`, ALICE)).toEqual(['team-api']);
    expect((await names(`/apiproducts?owner=${CAROL},${team}`, ALICE)).sort()).toEqual([
      'carol-api',
      'team-api',
    ]);
    expect(await names(`/apiproducts?owner=${ALICE}`, ALICE)).toEqual([]);
    const unnamed = await portal.api.get('/requests?product=team-api', CAROL);
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.message).toContain('product needs namespace');
  });

  it('revokes a key with a reason it audits; a reason over 1000 characters is a 400 that says so', async () => {
    const portal = await startPortal();
    await portal.product('carol-api');
    const key = await portal.keyRequest('carol-api', ALICE);
    const long = await portal.api.delete(
      `/requests/toystore/${key}?reason=${'x'.repeat(1001)}`,
      CAROL,
    );
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/reason/);
    expect((await portal.api.get(`/requests?requester=${ALICE}`, CAROL)).body.items).toHaveLength(
      1,
    );
    const revoked = await portal.api.delete(
      `/requests/toystore/${key}?reason=${encodeURIComponent('contract ended')}`,
      CAROL,
    );
    expect(revoked.status).toBe(204);
    expect(portal.events.at(-1)).toMatchObject({
      eventId: 'apikey-request-delete',
      outcome: 'succeeded',
      meta: { namespace: 'toystore', name: key, reason: 'contract ended' },
    });
    expect((await portal.api.get(`/requests?requester=${ALICE}`, CAROL)).body.items).toEqual([]);
  });

  describe('pagination (spec §9)', () => {
    const LIST_ROUTES = [
      '/apiproducts',
      '/requests',
      '/requests/my',
      '/httproutes',
      '/planpolicies',
      '/authpolicies',
      '/ratelimitpolicies',
    ];

    it('answers 400 naming the fix for a bad limit or a continue without limit, on every list', async () => {
      const portal = await startPortal();
      for (const route of LIST_ROUTES) {
        for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'limit=2.5']) {
          const response = await portal.api.get(`${route}?${query}`, CAROL);
          expect({ route, query, status: response.status }).toEqual({
            route,
            query,
            status: 400,
          });
          expect(response.body.error.message).toContain('limit: must be an integer from 1 to 1000');
        }
        const bare = await portal.api.get(`${route}?continue=abc`, CAROL);
        expect(bare.status).toBe(400);
        expect(bare.body.error.message).toContain('continue needs limit');
        // Without limit: the whole list, in the old shape plus an empty metadata.
        const whole = await portal.api.get(route, CAROL);
        expect(whole.status).toBe(200);
        expect(whole.body).toEqual({ items: expect.any(Array), metadata: {} });
      }
    });

    it('walks a list in pages; continue is present exactly while more follow', async () => {
      const portal = await startPortal();
      for (const name of ['p1', 'p2', 'p3']) await portal.product(name);
      const first = await portal.api.get('/apiproducts?limit=2', ALICE);
      expect(first.status).toBe(200);
      expect(first.body.items).toHaveLength(2);
      expect(typeof first.body.metadata.continue).toBe('string');
      const second = await portal.api.get(
        `/apiproducts?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`,
        ALICE,
      );
      expect(second.status).toBe(200);
      expect(second.body.metadata).toEqual({});
      const walked = [...first.body.items, ...second.body.items].map(
        (p: { metadata: { name: string } }) => p.metadata.name,
      );
      expect(walked.sort()).toEqual(['p1', 'p2', 'p3']);
      const exact = await portal.api.get('/apiproducts?limit=3', ALICE);
      expect(exact.body.items).toHaveLength(3);
      expect(exact.body.metadata).toEqual({});
      // Products keep their plans on every page.
      expect(second.body.items[0].status.plans.length).toBeGreaterThan(0);
    });

    it('refuses a continue token used with other filters, by another caller, on another route, or altered', async () => {
      const portal = await startPortal();
      for (const name of ['p1', 'p2', 'p3']) {
        await portal.product(name);
        await portal.keyRequest(name, ALICE);
      }
      const first = await portal.api.get('/requests?limit=1&namespace=toystore', ALICE);
      expect(first.status).toBe(200);
      const token = first.body.metadata.continue as string;
      const next = (route: string, user: string, extra = 'namespace=toystore', t = token) =>
        portal.api.get(`${route}?limit=1&${extra}&continue=${encodeURIComponent(t)}`, user);

      const same = await next('/requests', ALICE);
      expect(same.status).toBe(200);
      expect(same.body.items[0].metadata.name).not.toBe(first.body.items[0].metadata.name);
      // Unknown query parameters do not count as filters.
      expect((await next('/requests', ALICE, 'namespace=toystore&foo=1')).status).toBe(200);

      const refusals = [
        await next('/requests', ALICE, 'namespace=toystore&status=Pending'),
        await next('/requests', ALICE, ''),
        await next('/requests', BOB),
        await next('/requests', CAROL),
        await next('/requests/my', ALICE),
      ];
      for (const refused of refusals) {
        expect(refused.status).toBe(400);
        expect(refused.body.error.message).toContain('continue token belongs to another list');
      }
      const [body, signature] = token.split('.');
      const altered = [
        `${body}x.${signature}`,
        `${body}.${signature.slice(0, -2)}AA`,
        body,
        'garbage',
        `${Buffer.from('{"v":1,"c":"x","b":"y"}').toString('base64url')}.${signature}`,
      ];
      for (const bad of altered) {
        const refused = await next('/requests', ALICE, 'namespace=toystore', bad);
        expect(refused.status).toBe(400);
        expect(refused.body.error.message).toContain('continue token is not valid');
      }
    });
  });
});
