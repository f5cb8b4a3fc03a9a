/*
 * The portal plugin in a test backend with MOCKED auth, user info, permissions and
 * auditor (real SQLite store, real manifest files): details that the real-backend tests
 * in packages/backend cannot observe — how many permission round trips a request makes,
 * how a conditional approval is applied per item, what the audit trail records, and how
 * the plugin behaves when the permission framework allows everything.
 */
import path from 'node:path';
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type AuthorizePermissionRequest,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import request from 'supertest';
import { productOwnerApproval } from './permissions/testing';
import { portalPlugin } from './plugin';

const TOYSTORE_MANIFEST = path.resolve(
  __dirname,
  '..',
  '..',
  '..',
  'examples',
  'toystore.yaml',
);
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
  [BOB]: [
    ...CONSUMER,
    'portal.apiproduct.create',
    'portal.apiproduct.update.own',
  ],
};

function userOf(options?: {
  credentials?: BackstageCredentials;
}): string | undefined {
  return (
    options?.credentials?.principal as { userEntityRef?: string } | undefined
  )?.userEntityRef;
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
    async (
      queries: unknown[],
      opts?: { credentials?: BackstageCredentials },
    ) => {
      const user = userOf(opts);
      return queries.map((): PolicyDecision => {
        if (options.allowEverything || user === CAROL)
          return { result: AuthorizeResult.ALLOW };
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
      mockServices.permissions.mock({ authorize, authorizeConditional })
        .factory,
      mockServices.userInfo.mock({
        getUserInfo: async (credentials: BackstageCredentials) => {
          const userEntityRef = (
            credentials.principal as { userEntityRef: string }
          ).userEntityRef;
          return {
            userEntityRef,
            ownershipEntityRefs: [
              userEntityRef,
              ...(GROUPS[userEntityRef] ?? []),
            ],
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
    get: (p: string, user: string) =>
      request(server).get(`/api/portal${p}`).set(as(user)),
    post: (p: string, user: string, body: object = {}) =>
      request(server).post(`/api/portal${p}`).set(as(user)).send(body),
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
  const keyRequest = async (
    productName: string,
    user = ALICE,
    planTier = 'gold',
  ) => {
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
  it('asks .all and .own of a family in one authorize call per request', async () => {
    const portal = await startPortal();
    portal.authorize.mockClear();
    expect((await portal.api.get('/requests', ALICE)).status).toBe(200);
    expect(portal.authorize).toHaveBeenCalledTimes(1);
    expect(
      portal.authorize.mock.calls[0][0].map(r => r.permission.name),
    ).toEqual(['portal.apikey.read.all', 'portal.apikey.read.own']);
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
    expect(
      response.body.results.map((r: any) => r.success || r.error.statusCode),
    ).toEqual([
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
    expect(
      (await portal.api.post(`/requests/toystore/${key}/approve`, BOB)).status,
    ).toBe(200);
    expect(
      (await portal.api.post(`/requests/toystore/${key}/approve`, BOB)).status,
    ).toBe(409);
    const secret = await portal.api.get(
      `/apikeys/toystore/${key}/secret`,
      ALICE,
    );
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
    const metadata = await portal.api.get(
      '/.well-known/backstage/permissions/metadata',
      CAROL,
    );
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
    expect(
      (await portal.api.post(`/requests/toystore/${key}/approve`, erin)).status,
    ).toBe(200);
    expect(
      (await portal.api.get(`/apikeys/toystore/${key}/secret`, erin)).status,
    ).toBe(200);
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
});
