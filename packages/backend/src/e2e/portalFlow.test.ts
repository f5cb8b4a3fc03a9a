/*
 * End-to-end behaviour of the portal API on the real development backend, with the
 * fixture users signed in through oauth2-proxy and the RBAC fixture policies:
 * the whole key flow (alice requests, bob approves, alice reads the secret once), the
 * conditional approval policy, concurrency (one-time reveal, approve races, bulk), and
 * the edge of the API (validation, 413, merge patch, cascade delete).
 */
import type { ApiKey, ApiProduct, ObjectRef, PortalClient } from '@devportal/plugin-portal-common';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { STATIC_SERVICE_TOKEN, portalCall, portalClient, uniqueName } from '../testing/portalHttp';
import { backendDatabases } from '../testing/backendDatabases';

const NS = 'toystore';
const TOYSTORE_ROUTE = {
  group: 'gateway.networking.k8s.io',
  kind: 'HTTPRoute',
  name: 'toystore',
} as const;

describe.each(backendDatabases('portal end-to-end tests'))(
  'portal API end to end on $name (real backend, fixture users)',
  ({ config: database, cleanup }) => {
    let backend: BackendProcess;
    const tokens: Record<string, string> = {};
    const clients: Record<string, PortalClient> = {};

    beforeAll(async () => {
      backend = await startBackendProcess({
        config: {
          mcpBroker: { servers: [] },
          ...(database && { backend: { database } }),
        },
        // Info level, so that audit events are printed and the secret checks below
        // look at everything the backend logs.
        env: { LOG_LEVEL: 'info' },
      });
      for (const user of ['alice', 'bob', 'dave', 'carol', 'erin']) {
        tokens[user] = await backend.signIn(user);
        clients[user] = portalClient(backend, tokens[user]);
      }
    }, 120_000);

    afterAll(async () => {
      await backend?.stop();
      await cleanup();
    }, 60_000);

    const call = (
      user: string,
      method: string,
      path: string,
      body?: unknown,
      contentType?: string,
    ) =>
      portalCall(backend, method, path, {
        token: tokens[user],
        body,
        contentType,
      });

    async function createProduct(
      client: PortalClient,
      options: {
        owner?: string;
        approvalMode?: 'manual' | 'automatic';
        publishStatus?: 'Draft' | 'Published';
      } = {},
    ): Promise<ApiProduct> {
      return client.createApiProduct({
        metadata: {
          namespace: NS,
          name: uniqueName('flow'),
          ...(options.owner !== undefined && {
            annotations: { 'backstage.io/owner': options.owner },
          }),
        },
        spec: {
          displayName: 'Toystore',
          targetRef: TOYSTORE_ROUTE,
          approvalMode: options.approvalMode ?? 'manual',
          publishStatus: options.publishStatus ?? 'Published',
        },
      });
    }

    const refOf = (object: ApiKey | ApiProduct): ObjectRef => ({
      namespace: object.metadata.namespace,
      name: object.metadata.name,
    });

    async function approvedKeyOfAlice(): Promise<ObjectRef> {
      const product = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      const key = await clients.alice.createRequest({
        apiProductRef: refOf(product),
        planTier: 'gold',
      });
      await clients.bob.approveRequest(refOf(key));
      return refOf(key);
    }

    it('runs the whole key flow: alice requests, bob approves, alice reads the secret once, carol sees all, erin nothing', async () => {
      const product = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      expect(product.metadata.annotations?.['backstage.io/owner']).toBe(
        'group:default/payments-team',
      );
      expect(product.status?.plans.map(p => p.tier).sort()).toEqual(['bronze', 'gold', 'silver']);

      // alice finds the product and requests a key
      const visible = await clients.alice.listApiProducts({ namespace: NS });
      expect(visible.items.map(p => p.metadata.name)).toContain(product.metadata.name);
      const requested = await clients.alice.createRequest({
        apiProductRef: refOf(product),
        planTier: 'gold',
        useCase: 'checkout service',
        email: 'alice@example.com',
      });
      expect(requested.status).toMatchObject({
        phase: 'Pending',
        secretRevealed: false,
      });
      expect(requested.spec.requestedBy).toEqual({
        userId: 'user:default/alice',
        email: 'alice@example.com',
      });

      // bob (payments-team owns the product) sees the request and approves it
      const pending = await clients.bob.listRequests({
        status: 'Pending',
        namespace: NS,
      });
      expect(pending.items.map(k => k.metadata.name)).toContain(requested.metadata.name);
      const approved = await clients.bob.approveRequest(refOf(requested), {
        reason: 'welcome',
      });
      expect(approved.status).toMatchObject({
        phase: 'Approved',
        reviewedBy: 'user:default/bob',
        reason: 'welcome',
        secretRevealed: false,
      });
      expect(approved.status?.reviewedAt).toEqual(expect.any(String));

      // bob owns the product but may not read the consumer's secret
      const bobReads = await call('bob', 'GET', `/apikeys/${NS}/${requested.metadata.name}/secret`);
      expect(bobReads.status).toBe(403);

      // alice reads the secret exactly once
      const { apiKey } = await clients.alice.revealApiKeySecret(refOf(requested));
      expect(apiKey).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      const again = await call('alice', 'GET', `/apikeys/${NS}/${requested.metadata.name}/secret`);
      expect(again.status).toBe(409);
      expect(again.body.error.message).toMatch(/already revealed/);
      expect(JSON.stringify(again.body)).not.toContain(apiKey);

      // the key never appears in lists
      const mine = await clients.alice.listMyRequests();
      const listed = mine.items.find(k => k.metadata.name === requested.metadata.name);
      expect(listed?.status).toMatchObject({
        phase: 'Approved',
        secretRevealed: true,
      });
      expect(JSON.stringify(mine)).not.toContain(apiKey);

      // carol (admin) sees every request; erin (no role) nothing
      const all = await clients.carol.listRequests();
      expect(all.items.map(k => k.metadata.name)).toContain(requested.metadata.name);
      expect((await call('erin', 'GET', '/requests')).status).toBe(403);
      expect(
        (await call('erin', 'GET', `/apiproducts/${NS}/${product.metadata.name}`)).status,
      ).toBe(403);
      expect(
        (
          await call('erin', 'POST', '/requests', {
            apiProductRef: refOf(product),
            planTier: 'gold',
          })
        ).status,
      ).toBe(403);
      // The reveal was audited (who, what, outcome) and the secret is in no log line.
      expect(backend.output()).toMatch(
        new RegExp(
          `apikey-secret-reveal.*${requested.metadata.name}|${requested.metadata.name}.*apikey-secret-reveal`,
        ),
      );
      expect(backend.output()).not.toContain(apiKey);
    }, 60_000);

    it('lets bob approve requests for payments-team products only (conditional IS_PRODUCT_OWNER)', async () => {
      const carolsProduct = await createProduct(clients.carol);
      expect(carolsProduct.metadata.annotations?.['backstage.io/owner']).toBe('user:default/carol');
      const alicesKey = await clients.alice.createRequest({
        apiProductRef: refOf(carolsProduct),
        planTier: 'gold',
      });
      const bobsKey = await clients.bob.createRequest({
        apiProductRef: refOf(carolsProduct),
        planTier: 'silver',
      });

      // bob cannot read alice's request for carol's product at all: 404
      const hidden = await call(
        'bob',
        'POST',
        `/requests/${NS}/${alicesKey.metadata.name}/approve`,
        {},
      );
      expect(hidden.status).toBe(404);
      // bob can read his own request but may not approve it: 403
      const own = await call('bob', 'POST', `/requests/${NS}/${bobsKey.metadata.name}/approve`, {});
      expect(own.status).toBe(403);
      // alice (no approve permission at all): 403
      expect(
        (await call('alice', 'POST', `/requests/${NS}/${alicesKey.metadata.name}/approve`, {}))
          .status,
      ).toBe(403);

      // in one bulk call each item is decided on its own
      const teamProduct = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      const teamKey = await clients.alice.createRequest({
        apiProductRef: refOf(teamProduct),
        planTier: 'bronze',
      });
      const bulk = await call('dave', 'POST', '/requests/bulk-approve', {
        requests: [refOf(bobsKey), refOf(teamKey), refOf(alicesKey)],
      });
      expect(bulk.status).toBe(200);
      expect(bulk.body.results.map((r: any) => [r.name, r.success, r.error?.statusCode])).toEqual([
        [bobsKey.metadata.name, false, 404],
        [teamKey.metadata.name, true, undefined],
        [alicesKey.metadata.name, false, 404],
      ]);
      expect(bulk.body.results[1].apiKey.status).toMatchObject({
        phase: 'Approved',
        reviewedBy: 'user:default/dave',
      });

      // carol approves anything
      const byCarol = await clients.carol.approveRequest(refOf(alicesKey));
      expect(byCarol.status?.phase).toBe('Approved');
    }, 60_000);

    it('approves at once in automatic mode, refuses Draft and unknown products, unknown tiers and duplicates', async () => {
      const automatic = await createProduct(clients.bob, {
        approvalMode: 'automatic',
      });
      const key = await clients.alice.createRequest({
        apiProductRef: refOf(automatic),
        planTier: 'gold',
      });
      expect(key.status).toMatchObject({
        phase: 'Approved',
        reviewedBy: 'system:automatic-approval',
      });
      expect((await clients.alice.revealApiKeySecret(refOf(key))).apiKey).toEqual(
        expect.any(String),
      );

      const draft = await createProduct(clients.bob, {
        publishStatus: 'Draft',
      });
      const onDraft = await call('alice', 'POST', '/requests', {
        apiProductRef: refOf(draft),
        planTier: 'gold',
      });
      expect(onDraft.status).toBe(409);
      expect(onDraft.body.error.message).toMatch(/Draft/);

      const missing = await call('alice', 'POST', '/requests', {
        apiProductRef: { namespace: NS, name: 'no-such-product' },
        planTier: 'gold',
      });
      expect(missing.status).toBe(404);

      const manual = await createProduct(clients.bob);
      const badTier = await call('alice', 'POST', '/requests', {
        apiProductRef: refOf(manual),
        planTier: 'platinum',
      });
      expect(badTier.status).toBe(400);
      expect(badTier.body.error.message).toMatch(/gold/);

      expect(
        (
          await call('alice', 'POST', '/requests', {
            apiProductRef: refOf(manual),
            planTier: 'gold',
          })
        ).status,
      ).toBe(201);
      const duplicate = await call('alice', 'POST', '/requests', {
        apiProductRef: refOf(manual),
        planTier: 'gold',
      });
      expect(duplicate.status).toBe(409);

      const past = await call('alice', 'POST', '/requests', {
        apiProductRef: refOf(manual),
        planTier: 'silver',
        expiresAt: '2001-01-01T00:00:00Z',
      });
      expect(past.status).toBe(400);
      expect(past.body.error.message).toMatch(/expiresAt/);
    }, 60_000);

    it('reveals the secret exactly once under 50 concurrent reads', async () => {
      const ref = await approvedKeyOfAlice();
      const responses = await Promise.all(
        Array.from({ length: 50 }, () =>
          call('alice', 'GET', `/apikeys/${ref.namespace}/${ref.name}/secret`),
        ),
      );
      const statuses = responses.map(r => r.status);
      expect(statuses.filter(s => s === 200)).toHaveLength(1);
      expect(statuses.filter(s => s === 409)).toHaveLength(49);
    }, 60_000);

    it('lets exactly one of two concurrent approvals win; the other gets 409', async () => {
      const product = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      const key = await clients.alice.createRequest({
        apiProductRef: refOf(product),
        planTier: 'gold',
      });
      const path = `/requests/${NS}/${key.metadata.name}/approve`;
      const [a, b] = await Promise.all([
        call('bob', 'POST', path, {}),
        call('carol', 'POST', path, {}),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.body.error.message).toMatch(/Approved/);
    }, 60_000);

    it('keeps approve vs delete consistent: the key ends deleted and its secret unreadable', async () => {
      const product = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      const key = await clients.alice.createRequest({
        apiProductRef: refOf(product),
        planTier: 'gold',
      });
      const [approve, remove] = await Promise.all([
        call('bob', 'POST', `/requests/${NS}/${key.metadata.name}/approve`, {}),
        call('alice', 'DELETE', `/requests/${NS}/${key.metadata.name}`),
      ]);
      expect(remove.status).toBe(204);
      expect([200, 404]).toContain(approve.status);
      const secret = await call('alice', 'GET', `/apikeys/${NS}/${key.metadata.name}/secret`);
      expect(secret.status).toBe(404);
      const listed = await clients.carol.listRequests({ namespace: NS });
      expect(listed.items.map(k => k.metadata.name)).not.toContain(key.metadata.name);
    }, 60_000);

    it('refuses bulk calls with duplicates, and reports missing items on their own, in input order', async () => {
      const ref = await approvedKeyOfAlice();
      const duplicates = await call('carol', 'POST', '/requests/bulk-reject', {
        requests: [ref, ref],
      });
      expect(duplicates.status).toBe(400);
      expect(duplicates.body.error.message).toMatch(/duplicates requests\[0\]/);

      const tooMany = await call('carol', 'POST', '/requests/bulk-reject', {
        requests: Array.from({ length: 101 }, (_, i) => ({
          namespace: NS,
          name: `k${i}`,
        })),
      });
      expect(tooMany.status).toBe(400);
      expect((await call('carol', 'POST', '/requests/bulk-reject', { requests: [] })).status).toBe(
        400,
      );

      const product = await createProduct(clients.bob);
      const pending = await clients.alice.createRequest({
        apiProductRef: refOf(product),
        planTier: 'gold',
      });
      const mixed = await call('carol', 'POST', '/requests/bulk-reject', {
        requests: [{ namespace: NS, name: 'missing-one' }, refOf(pending), ref],
        reason: 'cleanup',
      });
      expect(mixed.status).toBe(200);
      expect(mixed.body.results).toEqual([
        {
          namespace: NS,
          name: 'missing-one',
          success: false,
          error: {
            name: 'NotFoundError',
            message: expect.any(String),
            statusCode: 404,
          },
        },
        expect.objectContaining({ name: pending.metadata.name, success: true }),
        expect.objectContaining({
          name: ref.name,
          success: false,
          error: expect.objectContaining({
            name: 'ConflictError',
            statusCode: 409,
          }),
        }),
      ]);
      expect(mixed.body.results[1].apiKey.status).toMatchObject({
        phase: 'Rejected',
        reason: 'cleanup',
      });
    }, 60_000);

    it('validates bodies and queries with readable 400s, 413 over 64 KiB and never a 500', async () => {
      const product = await createProduct(clients.bob);
      const unknown = await call('alice', 'POST', '/requests', {
        apiProductRef: refOf(product),
        planTier: 'gold',
        colour: 'blue',
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({
        name: 'InputError',
        message: expect.stringMatching(/colour is not a known field/),
      });

      const serverOwned = await call('bob', 'POST', '/apiproducts', {
        metadata: { namespace: NS, name: uniqueName('bad'), uid: 'x' },
        spec: { displayName: 'x', targetRef: TOYSTORE_ROUTE },
        status: { plans: [] },
      });
      expect(serverOwned.status).toBe(400);
      expect(serverOwned.body.error.message).toMatch(/metadata\.uid is set by the server/);
      expect(serverOwned.body.error.message).toMatch(/status is set by the server/);

      const noRoute = await call('bob', 'POST', '/apiproducts', {
        metadata: { namespace: NS, name: uniqueName('bad') },
        spec: {
          displayName: 'x',
          targetRef: { ...TOYSTORE_ROUTE, name: 'nope' },
        },
      });
      expect(noRoute.status).toBe(400);
      expect(noRoute.body.error.message).toMatch(/HTTPRoute toystore\/nope does not exist/);

      const sameName = await call('bob', 'POST', '/apiproducts', {
        metadata: { namespace: NS, name: product.metadata.name },
        spec: { displayName: 'x', targetRef: TOYSTORE_ROUTE },
      });
      expect(sameName.status).toBe(409);

      const big = await call('alice', 'POST', '/requests', {
        apiProductRef: refOf(product),
        planTier: 'gold',
        useCase: 'x'.repeat(70 * 1024),
      });
      expect(big.status).toBe(413);
      expect(big.body).toMatchObject({
        error: {
          name: 'PayloadTooLargeError',
          message: expect.stringMatching(/64 KiB/),
        },
        request: { method: 'POST' },
        response: { statusCode: 413 },
      });

      const malformed = await portalCall(backend, 'POST', '/requests', {
        token: tokens.alice,
        rawBody: '{"planTier":',
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.message).toMatch(/malformed JSON/);

      const textBody = await portalCall(backend, 'POST', '/requests', {
        token: tokens.alice,
        rawBody: 'hi',
        contentType: 'text/plain',
      });
      expect(textBody.status).toBe(415);

      expect((await call('alice', 'GET', '/requests?status=Done')).status).toBe(400);
      expect((await call('alice', 'GET', '/requests?status=Pending&colour=blue')).status).toBe(200);
      expect((await call('alice', 'GET', '/apiproducts/toystore/no-such')).status).toBe(404);
      expect((await call('alice', 'GET', '/planpolicies/toystore/no-such')).status).toBe(404);

      const owner = await call('bob', 'POST', '/apiproducts', {
        metadata: {
          namespace: NS,
          name: uniqueName('bad'),
          annotations: { 'backstage.io/owner': 'group:default/other-team' },
        },
        spec: { displayName: 'x', targetRef: TOYSTORE_ROUTE },
      });
      expect(owner.status).toBe(403);
    }, 60_000);

    it('merge-patches products with a resourceVersion precondition; route and owner need update.all', async () => {
      const product = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      const path = `/apiproducts/${NS}/${product.metadata.name}`;
      const patched = await call(
        'dave',
        'PATCH',
        path,
        {
          metadata: { labels: { tier: 'public' } },
          spec: { description: 'toys', tags: ['toys'] },
        },
        'application/merge-patch+json',
      );
      expect(patched.status).toBe(200);
      expect(patched.body.spec).toMatchObject({
        description: 'toys',
        tags: ['toys'],
        displayName: 'Toystore',
      });
      expect(patched.body.metadata.labels).toEqual({ tier: 'public' });

      const removed = await call('bob', 'PATCH', path, {
        spec: { description: null },
      });
      expect(removed.status).toBe(200);
      expect(removed.body.spec.description).toBeUndefined();

      const stale = await call('bob', 'PATCH', path, {
        metadata: { resourceVersion: product.metadata.resourceVersion },
        spec: { description: 'stale' },
      });
      expect(stale.status).toBe(409);

      const route = {
        spec: { targetRef: { ...TOYSTORE_ROUTE, name: 'toystore-admin' } },
      };
      expect((await call('bob', 'PATCH', path, route)).status).toBe(403);
      const byCarol = await call('carol', 'PATCH', path, route);
      expect(byCarol.status).toBe(200);
      expect(byCarol.body.status.plans).toEqual([]);
      expect(
        (
          await call('bob', 'PATCH', path, {
            metadata: {
              annotations: { 'backstage.io/owner': 'user:default/bob' },
            },
          })
        ).status,
      ).toBe(403);
      expect((await call('bob', 'PATCH', path, { spec: { status: 'x' } })).status).toBe(400);
    }, 60_000);

    it('deletes a product with its keys; the keys and their secrets are gone', async () => {
      const product = await createProduct(clients.bob, {
        owner: 'group:default/payments-team',
      });
      const key = await clients.alice.createRequest({
        apiProductRef: refOf(product),
        planTier: 'gold',
      });
      await clients.bob.approveRequest(refOf(key));
      expect(
        (await call('bob', 'DELETE', `/apiproducts/${NS}/${product.metadata.name}`)).status,
      ).toBe(204);
      expect(
        (await call('alice', 'GET', `/apikeys/${NS}/${key.metadata.name}/secret`)).status,
      ).toBe(404);
      expect((await call('bob', 'GET', `/apiproducts/${NS}/${product.metadata.name}`)).status).toBe(
        404,
      );
      const left = await clients.carol.listRequests({ namespace: NS });
      expect(left.items.map(k => k.metadata.name)).not.toContain(key.metadata.name);
    }, 60_000);

    it('serves the read-only kinds from the manifest files, also to the static service token', async () => {
      const routes = await portalCall(backend, 'GET', '/httproutes', {
        token: STATIC_SERVICE_TOKEN,
      });
      expect(routes.status).toBe(200);
      expect(routes.body.items.map((r: any) => r.metadata.name).sort()).toEqual([
        'toystore',
        'toystore-admin',
      ]);
      const plans = await clients.alice.getPlanPolicy({
        namespace: NS,
        name: 'toystore-plans',
      });
      expect((plans.spec as any).plans.map((p: any) => p.tier)).toEqual([
        'gold',
        'silver',
        'bronze',
      ]);
      expect((await clients.bob.listAuthPolicies()).items.map(p => p.metadata.name)).toEqual([
        'toystore-auth',
      ]);
      expect((await clients.bob.listRateLimitPolicies()).items.map(p => p.metadata.name)).toEqual([
        'toystore-rlp',
      ]);
      const serviceCreate = await portalCall(backend, 'POST', '/requests', {
        token: STATIC_SERVICE_TOKEN,
        body: { apiProductRef: { namespace: NS, name: 'x' }, planTier: 'gold' },
      });
      expect(serviceCreate.status).toBe(403);
    }, 60_000);
  },
);
