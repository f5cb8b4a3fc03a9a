/*
 * Issue #20 item 7: a 404 must not tell by its cost whether the key exists. For every route
 * that answers 404 for a key the caller may not see, the steps taken for a missing key and
 * for a hidden one — permission round trips (mocked permission and user-info services, which
 * record their calls) and store calls (the real SQLite store behind a recording proxy) — are
 * the same, in the same order. Wall time is not asserted; the steps are what it is made of.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, TestDatabases } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { OWNER_ANNOTATION, type ObjectRef } from '@devportal/plugin-portal-common';
import path from 'node:path';
import { productOwnerApproval } from '../permissions/testing';
import { ManifestResourceSource } from '../resources/ManifestResourceSource';
import { DatabasePortalStore } from '../store/DatabasePortalStore';
import type { PortalStore } from '../store/types';
import { AuthorizedPortalService } from './AuthorizedPortalService';
import { DefaultPortalService } from './DefaultPortalService';
import { PortalActors } from './PortalActors';

const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
/** May approve (for products she owns: none), read and change her own keys: sees nothing here. */
const MALLORY = 'user:default/mallory';
const MALLORY_GRANTS = [
  'portal.apikey.read.own',
  'portal.apikey.update.own',
  'portal.apikey.delete.own',
];

const databases = TestDatabases.create({ ids: ['SQLITE_3'] });

async function setUp() {
  const knex = await databases.init('SQLITE_3');
  const steps: string[] = [];
  const realStore = await DatabasePortalStore.create({
    database: mockServices.database({ knex }),
  });
  // Every store call is a step (its name, not its arguments: those name different keys).
  const store = new Proxy(realStore, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        steps.push(`store.${String(property)}`);
        return value.apply(target, args);
      };
    },
  }) as PortalStore;
  const userInfo = mockServices.userInfo.mock({
    getUserInfo: async (credentials: BackstageCredentials) => {
      steps.push('userInfo');
      const userEntityRef = (credentials.principal as { userEntityRef: string }).userEntityRef;
      return { userEntityRef, ownershipEntityRefs: [userEntityRef] };
    },
  });
  const actors = PortalActors.create({ userInfo });
  const service = DefaultPortalService.create({
    store,
    resources: await ManifestResourceSource.fromFiles([TOYSTORE]),
    actors,
  });
  const permissions = mockServices.permissions.mock({
    authorize: jest.fn(async requests => {
      steps.push('authorize');
      return requests.map(({ permission }: { permission: { name: string } }) => ({
        result: MALLORY_GRANTS.includes(permission.name)
          ? AuthorizeResult.ALLOW
          : AuthorizeResult.DENY,
      })) as any;
    }),
    authorizeConditional: jest.fn(async queries => {
      steps.push('authorizeConditional');
      return queries.map(() => productOwnerApproval([MALLORY])) as any;
    }),
  });
  const authorized = AuthorizedPortalService.create({
    service,
    permissions,
    actors,
  });

  // Bob's product and a key Alice asked for: neither is Mallory's.
  const product = await service.createProduct(mockCredentials.user(BOB), {
    metadata: {
      namespace: 'toystore',
      name: 'toys',
      annotations: { [OWNER_ANNOTATION]: BOB },
    },
    spec: {
      displayName: 'Toys',
      targetRef: {
        group: 'gateway.networking.k8s.io',
        kind: 'HTTPRoute',
        name: 'toystore',
      },
      publishStatus: 'Published',
    },
  });
  const key = await service.createRequest(mockCredentials.user(ALICE), {
    apiProductRef: product.metadata,
    planTier: 'gold',
  });
  const hidden: ObjectRef = { namespace: 'toystore', name: key.metadata.name };
  const missing: ObjectRef = { namespace: 'toystore', name: 'no-such-key' };

  /** The steps of one call, and its failure (which must be a 404). */
  const stepsOf = async (call: () => Promise<unknown>) => {
    steps.length = 0;
    const error = await call().then(
      () => undefined,
      e => e,
    );
    return { steps: [...steps], error: error?.name };
  };
  return {
    authorized,
    // Fresh per call, as the router makes them per request (the actor is remembered per
    // credentials object).
    get credentials() {
      return mockCredentials.user(MALLORY);
    },
    hidden,
    missing,
    stepsOf,
  };
}

describe('AuthorizedPortalService: a hidden key costs what a missing one does (mocked permissions, real SQLite store)', () => {
  type Setup = Awaited<ReturnType<typeof setUp>>;
  const routes: Array<[string, (s: Setup, ref: ObjectRef) => Promise<unknown>]> = [
    ['approve', (s, ref) => s.authorized.reviewRequest(s.credentials, ref, 'approve')],
    ['reject', (s, ref) => s.authorized.reviewRequest(s.credentials, ref, 'reject')],
    ['update', (s, ref) => s.authorized.updateRequest(s.credentials, ref, { useCase: 'x' })],
    ['delete', (s, ref) => s.authorized.deleteRequest(s.credentials, ref)],
    ['secret', (s, ref) => s.authorized.revealSecret(s.credentials, ref)],
  ];

  it.each(routes)('%s: the same steps, in the same order, for both 404s', async (_, call) => {
    const s = await setUp();
    const missing = await s.stepsOf(() => call(s, s.missing));
    const hidden = await s.stepsOf(() => call(s, s.hidden));
    expect(missing.error).toBe('NotFoundError');
    expect(hidden.error).toBe('NotFoundError');
    expect(hidden.steps).toEqual(missing.steps);
    expect(missing.steps).toContain('store.getKey');
  });

  it('bulk approve: the same steps for a missing and a hidden item', async () => {
    const s = await setUp();
    const missing = await s.stepsOf(() =>
      s.authorized.bulkReview(s.credentials, [s.missing], 'approve'),
    );
    const hidden = await s.stepsOf(() =>
      s.authorized.bulkReview(s.credentials, [s.hidden], 'approve'),
    );
    expect(hidden.steps).toEqual(missing.steps);
    const both = await s.authorized.bulkReview(s.credentials, [s.missing, s.hidden], 'approve');
    expect(both.map(r => !r.success && r.error.statusCode)).toEqual([404, 404]);
  });
});
