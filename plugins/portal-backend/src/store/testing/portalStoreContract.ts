/*
 * The contract every PortalStore implementation must pass (database on SQLite and
 * PostgreSQL, Kubernetes later). It drives the store only through the PortalStore
 * interface: no SQL, no Kubernetes calls, so any implementation can reuse it.
 */
import {
  OWNER_ANNOTATION,
  type ApiKey,
  type ApiProductSpec,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import type { KeyFilter, NewApiKey, PortalStore } from '../types';
import { describeExpiryClaimContract } from './expiryClaimContract';
import { describeMcpTargetContract } from './mcpTargetContract';
import { walkPages } from './walkPages';

/** One fresh, empty store for one test. */
// eslint-disable-next-line jest/no-export -- the store tests share this suite
export interface PortalStoreUnderTest {
  store: PortalStore;
  /** Releases the store's resources (connections, temporary databases). */
  cleanup(): Promise<void>;
  /** Makes the backing store unreachable, e.g. by closing its connections. */
  makeUnavailable(): Promise<void>;
}

/** Generous: PostgreSQL runs 50 concurrent transactions in some tests. */
const TEST_TIMEOUT_MS = 30_000;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
const DAVE = 'user:default/dave';
const PAYMENTS = 'group:default/payments-team';

function productSpec(overrides: Partial<ApiProductSpec> = {}): ApiProductSpec {
  return {
    displayName: 'Toy store',
    targetRef: {
      group: 'gateway.networking.k8s.io',
      kind: 'HTTPRoute',
      name: 'toystore',
    },
    approvalMode: 'manual',
    publishStatus: 'Published',
    ...overrides,
  };
}

function newKey(namespace: string, product: string, userId: string, planTier = 'gold'): NewApiKey {
  return {
    namespace,
    spec: { apiProductRef: { name: product }, planTier, requestedBy: { userId } },
  };
}

function refOf(object: { metadata: ObjectRef }): ObjectRef {
  return { namespace: object.metadata.namespace, name: object.metadata.name };
}

function names(keys: ApiKey[]): string[] {
  return keys.map(key => key.metadata.name).sort();
}

/** A random secret-looking value, distinct per call. */
function secret(): string {
  return `secret-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
}

async function outcome<T>(
  promise: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: Error }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error: error as Error };
  }
}

/**
 * Defines Jest tests for every guarantee of {@link PortalStore} (see `../types.ts`),
 * run against stores made by `createStore` (one fresh store per test).
 */
// eslint-disable-next-line jest/no-export -- the store tests share this suite
export function runPortalStoreContract(
  name: string,
  createStore: () => Promise<PortalStoreUnderTest>,
): void {
  describe(`PortalStore contract: ${name}`, () => {
    let current: PortalStoreUnderTest | undefined;
    let store: PortalStore;

    beforeEach(async () => {
      current = await createStore();
      store = current.store;
    }, TEST_TIMEOUT_MS);

    afterEach(async () => {
      await current?.cleanup();
      current = undefined;
    }, TEST_TIMEOUT_MS);

    async function createProduct(
      namespace: string,
      productName: string,
      owner: string,
      spec: Partial<ApiProductSpec> = {},
    ) {
      return store.createProduct({
        namespace,
        name: productName,
        annotations: { [OWNER_ANNOTATION]: owner },
        spec: productSpec(spec),
      });
    }

    /** An Approved key of a requester of its own, so it never collides with others. */
    async function approvedKey(namespace = 'toystore', product = 'toys') {
      const requester = `user:default/approved-${Math.random().toString(36).slice(2)}`;
      const key = await store.createKey(newKey(namespace, product, requester));
      const value = secret();
      await store.reviewKey(refOf(key), {
        phase: 'Approved',
        reviewedBy: BOB,
        secret: value,
      });
      return { key, secret: value };
    }

    describe('products', () => {
      it('creates a product in the API shape and reads it back', async () => {
        const created = await store.createProduct({
          namespace: 'toystore',
          name: 'toys',
          labels: { tier: 'public' },
          annotations: { [OWNER_ANNOTATION]: BOB, note: 'hello' },
          spec: productSpec({ description: 'Toys', tags: ['a', 'b'] }),
        });
        expect(created).toEqual({
          apiVersion: 'devportal.kuadrant.io/v1alpha1',
          kind: 'APIProduct',
          metadata: {
            namespace: 'toystore',
            name: 'toys',
            uid: expect.any(String),
            resourceVersion: expect.any(String),
            creationTimestamp: expect.stringMatching(RFC3339),
            labels: { tier: 'public' },
            annotations: { [OWNER_ANNOTATION]: BOB, note: 'hello' },
          },
          spec: productSpec({ description: 'Toys', tags: ['a', 'b'] }),
        });
        expect(created.metadata.uid).not.toBe('');
        expect(await store.getProduct({ namespace: 'toystore', name: 'toys' })).toEqual(created);
      });

      it('leaves absent optional fields out rather than null', async () => {
        const created = await store.createProduct({
          namespace: 'toystore',
          name: 'toys',
          annotations: { [OWNER_ANNOTATION]: BOB },
          spec: productSpec(),
        });
        const read = await store.getProduct(refOf(created));
        expect(read?.metadata).not.toHaveProperty('labels');
        expect(read?.spec).not.toHaveProperty('description');
        expect(JSON.stringify(read)).not.toContain('null');
      });

      it('refuses a second product with the same namespace and name', async () => {
        await createProduct('toystore', 'toys', BOB);
        await expect(createProduct('toystore', 'toys', DAVE)).rejects.toMatchObject({
          name: 'ConflictError',
        });
        // The same name in another namespace is another product.
        await expect(createProduct('other', 'toys', DAVE)).resolves.toBeDefined();
      });

      it('answers undefined for a product that does not exist', async () => {
        await createProduct('toystore', 'toys', BOB);
        expect(await store.getProduct({ namespace: 'toystore', name: 'nope' })).toBe(undefined);
        expect(await store.getProduct({ namespace: 'other', name: 'toys' })).toBe(undefined);
      });

      it('lists products by namespace and by owner refs', async () => {
        await createProduct('toystore', 'toys', BOB);
        await createProduct('toystore', 'games', PAYMENTS);
        await createProduct('other', 'cars', ALICE);
        const list = async (filter: Parameters<PortalStore['listProducts']>[0]) =>
          (await store.listProducts(filter)).map(p => refOf(p));

        expect(await list({})).toEqual(
          expect.arrayContaining([
            { namespace: 'toystore', name: 'toys' },
            { namespace: 'toystore', name: 'games' },
            { namespace: 'other', name: 'cars' },
          ]),
        );
        expect(await list({})).toHaveLength(3);
        expect((await list({ namespace: 'toystore' })).map(r => r.name).sort()).toEqual([
          'games',
          'toys',
        ]);
        expect((await list({ ownerRefs: [BOB, PAYMENTS] })).map(r => r.name).sort()).toEqual([
          'games',
          'toys',
        ]);
        expect(await list({ ownerRefs: [PAYMENTS] })).toEqual([
          { namespace: 'toystore', name: 'games' },
        ]);
        expect(await list({ ownerRefs: [ALICE], namespace: 'toystore' })).toEqual([]);
        expect(await list({ ownerRefs: [] })).toEqual([]);
      });

      it(
        'replaces a product over its current resourceVersion only',
        async () => {
          const created = await createProduct('toystore', 'toys', BOB);
          const replaced = await store.replaceProduct({
            ...created,
            metadata: { ...created.metadata, labels: { new: 'label' } },
            spec: productSpec({ displayName: 'Renamed' }),
          });
          expect(replaced.spec.displayName).toBe('Renamed');
          expect(replaced.metadata.labels).toEqual({ new: 'label' });
          expect(replaced.metadata.uid).toBe(created.metadata.uid);
          expect(replaced.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
          expect(typeof replaced.metadata.resourceVersion).toBe('string');
          expect(replaced.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
          expect(await store.getProduct(refOf(created))).toEqual(replaced);

          // Writing over the old version again is a lost update: refused.
          await expect(
            store.replaceProduct({
              ...created,
              spec: productSpec({ displayName: 'Stale' }),
            }),
          ).rejects.toMatchObject({ name: 'ConflictError' });
          for (const resourceVersion of ['not-a-version', '', '99999999999999999999', '-1']) {
            await expect(
              store.replaceProduct({
                ...created,
                metadata: { ...created.metadata, resourceVersion },
              }),
            ).rejects.toMatchObject({ name: 'ConflictError' });
          }
          expect((await store.getProduct(refOf(created)))?.spec.displayName).toBe('Renamed');
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'lets exactly one of two concurrent replaces of one version win',
        async () => {
          const created = await createProduct('toystore', 'toys', BOB);
          const results = await Promise.all(
            ['First', 'Second'].map(displayName =>
              outcome(store.replaceProduct({ ...created, spec: productSpec({ displayName }) })),
            ),
          );
          const winners = results.filter(r => r.ok);
          const losers = results.filter(r => !r.ok);
          expect(winners).toHaveLength(1);
          expect(losers).toHaveLength(1);
          expect(losers[0]).toMatchObject({ error: { name: 'ConflictError' } });
        },
        TEST_TIMEOUT_MS,
      );

      it('answers NotFoundError when replacing a product that does not exist', async () => {
        const created = await createProduct('toystore', 'toys', BOB);
        await expect(
          store.replaceProduct({
            ...created,
            metadata: { ...created.metadata, name: 'ghost' },
          }),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
      });

      it('moves ownership with the owner annotation on replace', async () => {
        const created = await createProduct('toystore', 'toys', BOB);
        const key = await store.createKey(newKey('toystore', 'toys', ALICE));
        await store.replaceProduct({
          ...created,
          metadata: {
            ...created.metadata,
            annotations: { [OWNER_ANNOTATION]: PAYMENTS },
          },
        });
        expect(await store.listProducts({ ownerRefs: [BOB] })).toEqual([]);
        expect(await store.listProducts({ ownerRefs: [PAYMENTS] })).toHaveLength(1);
        expect(
          names(
            await store.listKeys({ ownedBy: { userRef: DAVE, ownershipRefs: [DAVE, PAYMENTS] } }),
          ),
        ).toEqual([key.metadata.name]);
        expect(await store.listKeys({ ownedBy: { userRef: BOB, ownershipRefs: [BOB] } })).toEqual(
          [],
        );
      });

      it('deletes a product with its keys and secrets in its namespace only', async () => {
        await createProduct('toystore', 'toys', BOB);
        await createProduct('other', 'toys', BOB);
        const { key: approved } = await approvedKey('toystore', 'toys');
        const pending = await store.createKey(newKey('toystore', 'toys', DAVE));
        const { key: elsewhere, secret: elsewhereSecret } = await approvedKey('other', 'toys');

        await store.deleteProduct({ namespace: 'toystore', name: 'toys' });

        expect(await store.getProduct({ namespace: 'toystore', name: 'toys' })).toBe(undefined);
        expect(await store.getKey(refOf(approved))).toBe(undefined);
        expect(await store.getKey(refOf(pending))).toBe(undefined);
        await expect(store.revealSecret(refOf(approved))).rejects.toMatchObject({
          name: 'NotFoundError',
        });
        expect(await store.listKeys({ namespace: 'toystore' })).toEqual([]);

        // The product of the same name in another namespace, and its key, remain.
        expect(await store.getProduct({ namespace: 'other', name: 'toys' })).toBeDefined();
        expect(await store.getKey(refOf(elsewhere))).toBeDefined();
        expect(await store.revealSecret(refOf(elsewhere))).toBe(elsewhereSecret);

        // A product of the same name can be created again, with no keys left over.
        await createProduct('toystore', 'toys', BOB);
        expect(await store.listKeys({ namespace: 'toystore', productName: 'toys' })).toEqual([]);
      });

      it('answers NotFoundError when deleting a product that does not exist', async () => {
        await createProduct('toystore', 'toys', BOB);
        await expect(
          store.deleteProduct({ namespace: 'other', name: 'toys' }),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
        await store.deleteProduct({ namespace: 'toystore', name: 'toys' });
        await expect(
          store.deleteProduct({ namespace: 'toystore', name: 'toys' }),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
      });

      it(
        'never leaves a key behind when its product is deleted concurrently',
        async () => {
          await createProduct('toystore', 'toys', BOB);
          const creates = Array.from({ length: 10 }, (_, i) =>
            outcome(store.createKey(newKey('toystore', 'toys', `user:default/u${i}`))),
          );
          const deletion = outcome(store.deleteProduct({ namespace: 'toystore', name: 'toys' }));
          const results = await Promise.all(creates);
          expect(await deletion).toMatchObject({ ok: true });
          for (const result of results) {
            // Each create either went through or found its product already gone.
            expect(result).toMatchObject(
              result.ok ? { ok: true } : { ok: false, error: { name: 'NotFoundError' } },
            );
          }
          expect(await store.listKeys({ namespace: 'toystore' })).toEqual([]);
        },
        TEST_TIMEOUT_MS,
      );
    });

    describe('keys', () => {
      beforeEach(async () => {
        await createProduct('toystore', 'toys', BOB);
      });

      it('creates a Pending key with a generated name in the API shape', async () => {
        const key = await store.createKey({
          namespace: 'toystore',
          spec: {
            apiProductRef: { name: 'toys' },
            planTier: 'gold',
            useCase: 'testing',
            requestedBy: { userId: ALICE, email: 'alice@example.com' },
            expiresAt: '2099-01-01T00:00:00Z',
          },
        });
        expect(key).toEqual({
          apiVersion: 'devportal.kuadrant.io/v1alpha1',
          kind: 'APIKey',
          metadata: {
            namespace: 'toystore',
            name: expect.stringMatching(DNS1123_LABEL),
            uid: expect.any(String),
            resourceVersion: expect.any(String),
            creationTimestamp: expect.stringMatching(RFC3339),
          },
          spec: {
            apiProductRef: { name: 'toys' },
            planTier: 'gold',
            useCase: 'testing',
            requestedBy: { userId: ALICE, email: 'alice@example.com' },
            expiresAt: '2099-01-01T00:00:00Z',
          },
          status: { phase: 'Pending', secretRevealed: false },
        });
        expect(key.metadata.name.length).toBeLessThanOrEqual(63);
        expect(await store.getKey(refOf(key))).toEqual(key);

        const second = await store.createKey(newKey('toystore', 'toys', ALICE, 'silver'));
        expect(second.metadata.name).not.toBe(key.metadata.name);
        expect(second.metadata.uid).not.toBe(key.metadata.uid);
        expect(second.spec).not.toHaveProperty('useCase');
        expect(second.spec.requestedBy).toEqual({ userId: ALICE });
      });

      it('generates DNS-1123 names for products with long names', async () => {
        const longName = `p${'-a'.repeat(31)}`; // 63 characters
        await createProduct('toystore', longName, BOB);
        const key = await store.createKey(newKey('toystore', longName, ALICE));
        expect(key.metadata.name).toMatch(DNS1123_LABEL);
        expect(key.metadata.name.length).toBeLessThanOrEqual(63);
      });

      it('creates an Approved key at once when given an approval', async () => {
        const value = secret();
        const key = await store.createKey({
          ...newKey('toystore', 'toys', ALICE),
          approval: {
            reviewedBy: 'system:automatic-approval',
            reason: 'automatic',
            secret: value,
          },
        });
        expect(key.status).toEqual({
          phase: 'Approved',
          reviewedBy: 'system:automatic-approval',
          reviewedAt: expect.stringMatching(RFC3339),
          reason: 'automatic',
          secretRevealed: false,
        });
        expect(JSON.stringify(key)).not.toContain(value);
        expect(await store.getKey(refOf(key))).toEqual(key);
        expect(await store.revealSecret(refOf(key))).toBe(value);
      });

      it('refuses a key for a product that does not exist', async () => {
        await expect(store.createKey(newKey('toystore', 'ghost', ALICE))).rejects.toMatchObject({
          name: 'NotFoundError',
        });
        // Products are per namespace.
        await expect(store.createKey(newKey('other', 'toys', ALICE))).rejects.toMatchObject({
          name: 'NotFoundError',
        });
        expect(await store.listKeys({})).toEqual([]);
      });

      it('answers undefined for a key that does not exist', async () => {
        expect(await store.getKey({ namespace: 'toystore', name: 'ghost' })).toBe(undefined);
      });

      it('refuses a second Pending request for the same product and tier', async () => {
        const first = await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
        await expect(
          store.createKey(newKey('toystore', 'toys', ALICE, 'gold')),
        ).rejects.toMatchObject({ name: 'ConflictError' });

        // Another tier, another user, or an automatic approval are not duplicates.
        await store.createKey(newKey('toystore', 'toys', ALICE, 'silver'));
        await store.createKey(newKey('toystore', 'toys', DAVE, 'gold'));
        await store.createKey({
          ...newKey('toystore', 'toys', ALICE, 'gold'),
          approval: { reviewedBy: 'system:automatic-approval', secret: secret() },
        });

        // Once the first is no longer Pending, a new request is fine.
        await store.reviewKey(refOf(first), { phase: 'Rejected', reviewedBy: BOB });
        await expect(
          store.createKey(newKey('toystore', 'toys', ALICE, 'gold')),
        ).resolves.toMatchObject({ status: { phase: 'Pending' } });
      });

      it(
        'lets exactly one of many concurrent duplicate requests through',
        async () => {
          const results = await Promise.all(
            Array.from({ length: 10 }, () =>
              outcome(store.createKey(newKey('toystore', 'toys', ALICE, 'gold'))),
            ),
          );
          expect(results.filter(r => r.ok)).toHaveLength(1);
          for (const result of results.filter(r => !r.ok)) {
            expect(result).toMatchObject({ error: { name: 'ConflictError' } });
          }
          expect(await store.listKeys({ requestedBy: ALICE })).toHaveLength(1);
        },
        TEST_TIMEOUT_MS,
      );

      it('filters keys by namespace, phase, product and requester', async () => {
        await createProduct('toystore', 'games', PAYMENTS);
        await createProduct('other', 'toys', ALICE);
        const a1 = await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
        const a2 = await store.createKey(newKey('toystore', 'games', ALICE, 'gold'));
        const d1 = await store.createKey(newKey('toystore', 'toys', DAVE, 'gold'));
        const o1 = await store.createKey(newKey('other', 'toys', DAVE, 'gold'));
        await store.reviewKey(refOf(a2), {
          phase: 'Approved',
          reviewedBy: BOB,
          secret: secret(),
        });
        await store.reviewKey(refOf(d1), { phase: 'Rejected', reviewedBy: BOB });

        const n = (keys: ApiKey[]) => names(keys);
        const list = async (filter: KeyFilter) => n(await store.listKeys(filter));
        expect(await list({})).toEqual(n([a1, a2, d1, o1]));
        expect(await list({ namespace: 'toystore' })).toEqual(n([a1, a2, d1]));
        expect(await list({ phase: 'Pending' })).toEqual(n([a1, o1]));
        expect(await list({ phase: 'Approved' })).toEqual(n([a2]));
        expect(await list({ phase: 'Rejected', namespace: 'toystore' })).toEqual(n([d1]));
        expect(await list({ namespace: 'toystore', productName: 'toys' })).toEqual(n([a1, d1]));
        expect(await list({ namespace: 'other', productName: 'toys' })).toEqual(n([o1]));
        expect(await list({ requestedBy: DAVE })).toEqual(n([d1, o1]));
        expect(await list({ requestedBy: DAVE, namespace: 'other' })).toEqual(n([o1]));
        expect(await list({ requestedBy: 'user:default/nobody' })).toEqual([]);
        // By the owner of the key's product (any of the refs), in that product's namespace.
        expect(await list({ productOwnerRefs: [BOB] })).toEqual(n([a1, d1]));
        expect(await list({ productOwnerRefs: [PAYMENTS, ALICE] })).toEqual(n([a2, o1]));
        expect(
          await list({ productOwnerRefs: [ALICE], namespace: 'toystore', productName: 'toys' }),
        ).toEqual([]);
        expect(await list({ productOwnerRefs: [BOB], phase: 'Pending' })).toEqual(n([a1]));
        expect(await list({ productOwnerRefs: [ALICE], requestedBy: DAVE })).toEqual(n([o1]));
        expect(await list({ productOwnerRefs: [] })).toEqual([]);
      });

      it('filters keys the caller owns as requester or as product owner, groups included', async () => {
        await createProduct('toystore', 'games', PAYMENTS);
        await createProduct('other', 'toys', ALICE);
        const aliceToys = await store.createKey(newKey('toystore', 'toys', ALICE));
        const aliceGames = await store.createKey(newKey('toystore', 'games', ALICE));
        const daveToys = await store.createKey(newKey('toystore', 'toys', DAVE));
        const daveOther = await store.createKey(newKey('other', 'toys', DAVE));
        const bobGames = await store.createKey(newKey('toystore', 'games', BOB));

        const owned = async (userRef: string, refs: string[], extra: KeyFilter = {}) =>
          names(await store.listKeys({ ...extra, ownedBy: { userRef, ownershipRefs: refs } }));

        // alice: her own requests, plus requests for her product in "other".
        expect(await owned(ALICE, [ALICE])).toEqual(names([aliceToys, aliceGames, daveOther]));
        // bob: owner of toys (user) and games (group); his own request is listed once.
        expect(await owned(BOB, [BOB, PAYMENTS])).toEqual(
          names([aliceToys, aliceGames, daveToys, bobGames]),
        );
        // bob without his group sees only toys and his own request.
        expect(await owned(BOB, [BOB])).toEqual(names([aliceToys, daveToys, bobGames]));
        // dave: his own requests, plus games through the group.
        expect(await owned(DAVE, [DAVE, PAYMENTS])).toEqual(
          names([aliceGames, daveToys, daveOther, bobGames]),
        );
        // erin owns nothing.
        expect(await owned('user:default/erin', ['user:default/erin'])).toEqual([]);
        expect(await owned('user:default/erin', [])).toEqual([]);
        // Combined with other filters, all must hold.
        expect(
          await owned(BOB, [BOB, PAYMENTS], { namespace: 'toystore', productName: 'games' }),
        ).toEqual(names([aliceGames, bobGames]));
        expect(await owned(DAVE, [DAVE, PAYMENTS], { namespace: 'other' })).toEqual(
          names([daveOther]),
        );
        expect(await owned(DAVE, [DAVE, PAYMENTS], { requestedBy: ALICE })).toEqual(
          names([aliceGames]),
        );
        expect(await owned(BOB, [BOB, PAYMENTS], { productOwnerRefs: [PAYMENTS] })).toEqual(
          names([aliceGames, bobGames]),
        );
        expect(await owned(ALICE, [ALICE], { productOwnerRefs: [BOB] })).toEqual(
          names([aliceToys]),
        );
        await store.reviewKey(refOf(aliceGames), { phase: 'Rejected', reviewedBy: BOB });
        expect(await owned(BOB, [BOB, PAYMENTS], { phase: 'Pending' })).toEqual(
          names([aliceToys, daveToys, bobGames]),
        );
      });

      it('edits a key only while it is Pending', async () => {
        const key = await store.createKey({
          ...newKey('toystore', 'toys', ALICE, 'gold'),
          spec: {
            ...newKey('toystore', 'toys', ALICE, 'gold').spec,
            useCase: 'first',
            expiresAt: '2099-01-01T00:00:00Z',
          },
        });
        const edited = await store.updatePendingKey(refOf(key), {
          planTier: 'silver',
          useCase: 'second',
        });
        expect(edited.spec).toMatchObject({
          planTier: 'silver',
          useCase: 'second',
          expiresAt: '2099-01-01T00:00:00Z',
        });
        expect(edited.metadata.resourceVersion).not.toBe(key.metadata.resourceVersion);
        const cleared = await store.updatePendingKey(refOf(key), { expiresAt: null });
        expect(cleared.spec).not.toHaveProperty('expiresAt');
        expect(await store.getKey(refOf(key))).toEqual(cleared);

        await store.reviewKey(refOf(key), {
          phase: 'Approved',
          reviewedBy: BOB,
          secret: secret(),
        });
        await expect(
          store.updatePendingKey(refOf(key), { useCase: 'third' }),
        ).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining('Approved'),
        });
        expect((await store.getKey(refOf(key)))?.spec.useCase).toBe('second');
        await expect(
          store.updatePendingKey({ namespace: 'toystore', name: 'ghost' }, { useCase: 'x' }),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
      });

      it('refuses an edit that would make a duplicate Pending request', async () => {
        await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
        const silver = await store.createKey(newKey('toystore', 'toys', ALICE, 'silver'));
        await expect(
          store.updatePendingKey(refOf(silver), { planTier: 'gold' }),
        ).rejects.toMatchObject({ name: 'ConflictError' });
        expect((await store.getKey(refOf(silver)))?.spec.planTier).toBe('silver');
      });

      it('approves and rejects only from Pending, naming the current phase otherwise', async () => {
        const toApprove = await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
        const toReject = await store.createKey(newKey('toystore', 'toys', ALICE, 'silver'));

        const approved = await store.reviewKey(refOf(toApprove), {
          phase: 'Approved',
          reviewedBy: BOB,
          reason: 'looks fine',
          secret: secret(),
        });
        expect(approved.status).toEqual({
          phase: 'Approved',
          reviewedBy: BOB,
          reviewedAt: expect.stringMatching(RFC3339),
          reason: 'looks fine',
          secretRevealed: false,
        });
        expect(approved.metadata.resourceVersion).not.toBe(toApprove.metadata.resourceVersion);
        expect(await store.getKey(refOf(toApprove))).toEqual(approved);

        const rejected = await store.reviewKey(refOf(toReject), {
          phase: 'Rejected',
          reviewedBy: BOB,
        });
        expect(rejected.status).toEqual({
          phase: 'Rejected',
          reviewedBy: BOB,
          reviewedAt: expect.stringMatching(RFC3339),
          secretRevealed: false,
        });

        await expect(
          store.reviewKey(refOf(toApprove), { phase: 'Rejected', reviewedBy: BOB }),
        ).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining('Approved'),
        });
        await expect(
          store.reviewKey(refOf(toReject), {
            phase: 'Approved',
            reviewedBy: BOB,
            secret: secret(),
          }),
        ).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining('Rejected'),
        });
        expect((await store.getKey(refOf(toReject)))?.status?.phase).toBe('Rejected');
        await expect(
          store.reviewKey(
            { namespace: 'toystore', name: 'ghost' },
            { phase: 'Rejected', reviewedBy: BOB },
          ),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
      });

      it(
        'lets exactly one of two concurrent approvals win',
        async () => {
          const key = await store.createKey(newKey('toystore', 'toys', ALICE));
          const secrets = [secret(), secret()];
          const results = await Promise.all(
            secrets.map(value =>
              outcome(
                store.reviewKey(refOf(key), {
                  phase: 'Approved',
                  reviewedBy: BOB,
                  secret: value,
                }),
              ),
            ),
          );
          const winners = results.filter(r => r.ok);
          expect(winners).toHaveLength(1);
          expect(results.filter(r => !r.ok)).toEqual([
            {
              ok: false,
              error: expect.objectContaining({
                name: 'ConflictError',
                message: expect.stringContaining('Approved'),
              }),
            },
          ]);
          // The stored secret is the winner's.
          const winnerIndex = results.findIndex(r => r.ok);
          expect(await store.revealSecret(refOf(key))).toBe(secrets[winnerIndex]);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'lets exactly one of a concurrent approval and rejection win',
        async () => {
          const key = await store.createKey(newKey('toystore', 'toys', ALICE));
          const [approval, rejection] = await Promise.all([
            outcome(
              store.reviewKey(refOf(key), {
                phase: 'Approved',
                reviewedBy: BOB,
                secret: secret(),
              }),
            ),
            outcome(store.reviewKey(refOf(key), { phase: 'Rejected', reviewedBy: DAVE })),
          ]);
          expect([approval.ok, rejection.ok].filter(Boolean)).toHaveLength(1);
          const finalPhase = (await store.getKey(refOf(key)))?.status?.phase;
          expect(finalPhase).toBe(approval.ok ? 'Approved' : 'Rejected');
          const loser = approval.ok ? rejection : approval;
          expect(loser).toMatchObject({
            error: { name: 'ConflictError', message: expect.stringContaining(finalPhase!) },
          });
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'leaves neither key nor secret when an approval races a delete',
        async () => {
          for (let round = 0; round < 5; round++) {
            const key = await store.createKey(
              newKey('toystore', 'toys', `user:default/racer${round}`),
            );
            const [approval, deletion] = await Promise.all([
              outcome(
                store.reviewKey(refOf(key), {
                  phase: 'Approved',
                  reviewedBy: BOB,
                  secret: secret(),
                }),
              ),
              outcome(store.deleteKey(refOf(key))),
            ]);
            expect(deletion).toMatchObject({ ok: true });
            // The approval either went through or found the key already gone.
            expect(approval).toMatchObject(
              approval.ok ? { ok: true } : { ok: false, error: { name: 'NotFoundError' } },
            );
            expect(await store.getKey(refOf(key))).toBe(undefined);
            await expect(store.revealSecret(refOf(key))).rejects.toMatchObject({
              name: 'NotFoundError',
            });
          }
        },
        TEST_TIMEOUT_MS,
      );
    });

    describe('secrets', () => {
      beforeEach(async () => {
        await createProduct('toystore', 'toys', BOB);
      });

      it('reveals the secret once, then answers ConflictError', async () => {
        const { key, secret: value } = await approvedKey();
        expect(await store.revealSecret(refOf(key))).toBe(value);
        const after = await store.getKey(refOf(key));
        expect(after?.status).toMatchObject({
          phase: 'Approved',
          secretRevealed: true,
          secretRevealedAt: expect.stringMatching(RFC3339),
        });
        await expect(store.revealSecret(refOf(key))).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining('already revealed'),
        });
      });

      it(
        'reveals the secret exactly once under 50 concurrent reads',
        async () => {
          const { key, secret: value } = await approvedKey();
          const results = await Promise.all(
            Array.from({ length: 50 }, () => outcome(store.revealSecret(refOf(key)))),
          );
          const revealed = results.filter(r => r.ok);
          expect(revealed).toEqual([{ ok: true, value }]);
          const refused = results.filter(r => !r.ok);
          expect(refused).toHaveLength(49);
          for (const result of refused) {
            expect(result).toMatchObject({ error: { name: 'ConflictError' } });
            expect(JSON.stringify(result)).not.toContain(value);
          }
        },
        TEST_TIMEOUT_MS,
      );

      it('refuses to reveal a secret of a key that is not Approved', async () => {
        const pending = await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
        await expect(store.revealSecret(refOf(pending))).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining('Pending'),
        });
        const rejected = await store.createKey(newKey('toystore', 'toys', ALICE, 'silver'));
        await store.reviewKey(refOf(rejected), { phase: 'Rejected', reviewedBy: BOB });
        await expect(store.revealSecret(refOf(rejected))).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining('Rejected'),
        });
        // A refused reveal does not use up the secret of a later approval.
        const { key, secret: value } = await approvedKey();
        expect(await store.revealSecret(refOf(key))).toBe(value);
        await expect(
          store.revealSecret({ namespace: 'toystore', name: 'ghost' }),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
      });

      it('never returns a secret from getKey, listKeys or reviews', async () => {
        const value = secret();
        const key = await store.createKey(newKey('toystore', 'toys', ALICE));
        const approved = await store.reviewKey(refOf(key), {
          phase: 'Approved',
          reviewedBy: BOB,
          secret: value,
        });
        const outputs = async () => [
          approved,
          await store.getKey(refOf(key)),
          await store.listKeys({}),
          await store.listKeys({ ownedBy: { userRef: ALICE, ownershipRefs: [ALICE] } }),
          await store.listKeys({ ownedBy: { userRef: BOB, ownershipRefs: [BOB] } }),
          await store.listProducts({}),
        ];
        expect(JSON.stringify(await outputs())).not.toContain(value);
        await store.revealSecret(refOf(key));
        expect(JSON.stringify(await outputs())).not.toContain(value);
      });

      it('deletes an Approved key with its secret', async () => {
        const { key } = await approvedKey();
        await store.deleteKey(refOf(key));
        expect(await store.getKey(refOf(key))).toBe(undefined);
        await expect(store.revealSecret(refOf(key))).rejects.toMatchObject({
          name: 'NotFoundError',
        });
        await expect(store.deleteKey(refOf(key))).rejects.toMatchObject({
          name: 'NotFoundError',
        });
      });

      it('deletes keys in any phase', async () => {
        const pending = await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
        const rejected = await store.createKey(newKey('toystore', 'toys', ALICE, 'silver'));
        await store.reviewKey(refOf(rejected), { phase: 'Rejected', reviewedBy: BOB });
        await store.deleteKey(refOf(pending));
        await store.deleteKey(refOf(rejected));
        expect(await store.listKeys({})).toEqual([]);
        // The pending slot is free again.
        await store.createKey(newKey('toystore', 'toys', ALICE, 'gold'));
      });
    });

    describe('pages', () => {
      const refsOf = (items: Array<{ metadata: ObjectRef }>) =>
        items.map(item => `${item.metadata.namespace}/${item.metadata.name}`);

      it(
        'walks products page by page, the cursor present exactly when more follow',
        async () => {
          for (const [namespace, productName] of [
            ['toystore', 'a'],
            ['toystore', 'b'],
            ['other', 'c'],
            ['toystore', 'd'],
            ['other', 'e'],
          ]) {
            await createProduct(namespace, productName, BOB);
          }
          const all = refsOf(await store.listProducts({}));
          const pages = await walkPages(page => store.listProductsPage({}, page), 2);
          expect(pages.map(p => p.length)).toEqual([2, 2, 1]);
          const walked = refsOf(pages.flat());
          expect([...walked].sort()).toEqual([...all].sort());
          // The order is stable: a second walk in other page sizes gives the same sequence.
          expect(
            refsOf((await walkPages(page => store.listProductsPage({}, page), 3)).flat()),
          ).toEqual(walked);
          // A page holding everything has no cursor; so does a page of exactly the rest.
          expect((await store.listProductsPage({}, { limit: 5 })).cursor).toBeUndefined();
          expect((await store.listProductsPage({}, { limit: 6 })).cursor).toBeUndefined();
          expect((await store.listProductsPage({}, { limit: 4 })).cursor).toBeDefined();
          // Filters hold on every page.
          const ofOther = await walkPages(
            page => store.listProductsPage({ namespace: 'other' }, page),
            1,
          );
          expect(refsOf(ofOther.flat()).sort()).toEqual(['other/c', 'other/e']);
          await createProduct('toystore', 'f', ALICE);
          const alices = await walkPages(
            page => store.listProductsPage({ ownerRefs: [ALICE, PAYMENTS] }, page),
            1,
          );
          expect(refsOf(alices.flat())).toEqual(['toystore/f']);
          expect((await store.listProductsPage({ ownerRefs: [] }, { limit: 10 })).items).toEqual(
            [],
          );
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'neither repeats nor skips a key that existed before the walk, under concurrent inserts and deletes',
        async () => {
          await createProduct('toystore', 'toys', BOB);
          await createProduct('other', 'toys', BOB);
          const before: ApiKey[] = [];
          for (let i = 0; i < 8; i++) {
            const namespace = i % 2 === 0 ? 'toystore' : 'other';
            before.push(await store.createKey(newKey(namespace, 'toys', `user:default/u${i}`)));
          }
          const added: ApiKey[] = [];
          const pages = await walkPages(
            page => store.listKeysPage({}, page),
            3,
            async pageIndex => {
              // Between pages: new requests in both namespaces, and one earlier key gone.
              const [a, b] = await Promise.all([
                store.createKey(newKey('toystore', 'toys', `user:default/new${pageIndex}`)),
                store.createKey(newKey('other', 'toys', `user:default/new${pageIndex}`)),
              ]);
              added.push(a, b);
              if (pageIndex === 1) {
                await store.deleteKey(refOf(before[7]));
              }
            },
          );
          const walked = refsOf(pages.flat());
          expect(new Set(walked).size).toBe(walked.length);
          const expected = refsOf(before.slice(0, 7));
          expect(walked).toEqual(expect.arrayContaining(expected));
          // Nothing else than keys that existed at some point of the walk.
          const known = new Set([...refsOf(before), ...refsOf(added)]);
          expect(walked.filter(ref => !known.has(ref))).toEqual([]);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'pages filtered key lists (phase, requester, ownership) exactly like the whole lists',
        async () => {
          await createProduct('toystore', 'toys', BOB);
          await createProduct('toystore', 'games', PAYMENTS);
          await createProduct('other', 'toys', ALICE);
          const keys: ApiKey[] = [];
          for (const [namespace, product, requester] of [
            ['toystore', 'toys', ALICE],
            ['toystore', 'games', ALICE],
            ['toystore', 'toys', DAVE],
            ['other', 'toys', DAVE],
            ['toystore', 'games', BOB],
            ['other', 'toys', BOB],
            ['toystore', 'toys', 'user:default/erin'],
          ]) {
            keys.push(await store.createKey(newKey(namespace, product, requester)));
          }
          await store.reviewKey(refOf(keys[1]), { phase: 'Rejected', reviewedBy: BOB });
          await store.reviewKey(refOf(keys[5]), { phase: 'Rejected', reviewedBy: ALICE });
          const filters: KeyFilter[] = [
            { phase: 'Pending' },
            { phase: 'Rejected', namespace: 'toystore' },
            { requestedBy: DAVE },
            { namespace: 'toystore', productName: 'toys' },
            { ownedBy: { userRef: BOB, ownershipRefs: [BOB, PAYMENTS] } },
            { ownedBy: { userRef: BOB, ownershipRefs: [BOB, PAYMENTS] }, phase: 'Pending' },
            { ownedBy: { userRef: ALICE, ownershipRefs: [ALICE] }, namespace: 'other' },
            { ownedBy: { userRef: DAVE, ownershipRefs: [DAVE, PAYMENTS] } },
            { ownedBy: { userRef: 'user:default/nobody', ownershipRefs: [] } },
            { productOwnerRefs: [PAYMENTS, ALICE] },
            { productOwnerRefs: [BOB], phase: 'Pending' },
            { productOwnerRefs: [PAYMENTS], ownedBy: { userRef: ALICE, ownershipRefs: [ALICE] } },
          ];
          const storeUnderTest = store; // a const, for the closures made in the loop below
          for (const filter of filters) {
            const whole = refsOf(await store.listKeys(filter)).sort();
            for (const limit of [1, 2]) {
              const pages = await walkPages(
                page => storeUnderTest.listKeysPage(filter, page),
                limit,
              );
              const walked = refsOf(pages.flat());
              expect({ filter, limit, walked: [...walked].sort() }).toEqual({
                filter,
                limit,
                walked: whole,
              });
            }
          }
        },
        TEST_TIMEOUT_MS,
      );

      it('refuses a cursor it did not issue with an InputError', async () => {
        await createProduct('toystore', 'toys', BOB);
        for (const cursor of ['not-a-cursor', Buffer.from('{"x":1}').toString('base64url')]) {
          await expect(store.listKeysPage({}, { limit: 1, cursor })).rejects.toMatchObject({
            name: 'InputError',
          });
          await expect(store.listProductsPage({}, { limit: 1, cursor })).rejects.toMatchObject({
            name: 'InputError',
          });
        }
      });
    });

    describeExpiryClaimContract(() => store);
    describeMcpTargetContract(() => store);

    describe('failures', () => {
      it(
        'answers ServiceUnavailableError when the backing store is unreachable',
        async () => {
          await createProduct('toystore', 'toys', BOB);
          await current!.makeUnavailable();
          const ref = { namespace: 'toystore', name: 'toys' };
          await expect(store.getProduct(ref)).rejects.toMatchObject({
            name: 'ServiceUnavailableError',
          });
          await expect(store.listKeys({})).rejects.toMatchObject({
            name: 'ServiceUnavailableError',
          });
          await expect(store.createKey(newKey('toystore', 'toys', ALICE))).rejects.toMatchObject({
            name: 'ServiceUnavailableError',
          });
          await expect(store.revealSecret({ ...ref, name: 'k' })).rejects.toMatchObject({
            name: 'ServiceUnavailableError',
          });
        },
        TEST_TIMEOUT_MS,
      );
    });
  });
}
