/*
 * What the Kubernetes store adds to the shared contract, on the fake API server of
 * @internal/fake-kube-apiserver (real client-node calls over HTTPS; the fake's request
 * log and fault injection stand in for watching a real cluster).
 */
import { OWNER_ANNOTATION, type ApiProductSpec } from '@devportal/plugin-portal-common';
import type { FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import type { KubernetesPortalStore } from './KubernetesPortalStore';
import {
  KEY_UID_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OWNER_LABEL,
  PRODUCT_LABEL,
  REQUESTER_LABEL,
  entityRefLabelValue,
} from './labels';
import { claimName } from './pendingClaims';
import { storeOnFakeApiServer } from './testing';

const TEST_TIMEOUT_MS = 20_000;
const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
const PAYMENTS = 'group:default/payments-team';
const DEVPORTAL = 'devportal.kuadrant.io/v1alpha1';

const spec: ApiProductSpec = {
  displayName: 'Toys',
  targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
  approvalMode: 'manual',
  publishStatus: 'Published',
};

async function outcome<T>(promise: Promise<T>) {
  try {
    return { ok: true as const, value: await promise };
  } catch (error) {
    return { ok: false as const, error: error as Error };
  }
}

describe('KubernetesPortalStore on a fake Kubernetes API server', () => {
  let fake: FakeKubeApiServer;
  let store: KubernetesPortalStore;
  let logger: Awaited<ReturnType<typeof storeOnFakeApiServer>>['logger'];

  async function start(kubernetes: Record<string, unknown> = {}) {
    ({ fake, store, logger } = await storeOnFakeApiServer({ kubernetes }));
  }

  afterEach(async () => {
    await fake?.close();
  });

  const createProduct = (name = 'toys', owner = BOB, namespace = 'toystore') =>
    store.createProduct({
      namespace,
      name,
      annotations: { [OWNER_ANNOTATION]: owner },
      spec,
    });
  const newKey = (userId = ALICE, planTier = 'gold', product = 'toys') => ({
    namespace: 'toystore',
    spec: { apiProductRef: { name: product }, planTier, requestedBy: { userId } },
  });
  const ref = (o: { metadata: { namespace: string; name: string } }) => ({
    namespace: o.metadata.namespace,
    name: o.metadata.name,
  });

  describe('mapping to custom resources', () => {
    beforeEach(() => start());

    it('stores products and keys as devportal custom resources with encoded labels', async () => {
      await createProduct();
      const key = await store.createKey(newKey());
      const product = fake.getObject(DEVPORTAL, 'APIProduct', 'toystore', 'toys')!;
      expect(product.metadata!.labels).toEqual({ [OWNER_LABEL]: entityRefLabelValue(BOB) });
      expect(product.metadata!.annotations).toEqual({ [OWNER_ANNOTATION]: BOB });
      const stored = fake.getObject(DEVPORTAL, 'APIKey', 'toystore', key.metadata.name)!;
      expect(stored.metadata!.labels).toEqual({
        [REQUESTER_LABEL]: entityRefLabelValue(ALICE),
        [PRODUCT_LABEL]: 'toys',
      });
      expect(stored.metadata!.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'APIProduct', name: 'toys', uid: product.metadata!.uid }),
      ]);
      expect(stored.status).toEqual({ phase: 'Pending', secretRevealed: false });
      // The status was written through the status subresource, with a precondition.
      const statusWrite = fake.requests({
        verb: 'patch',
        resource: 'apikeys',
        subresource: 'status',
      });
      expect(statusWrite).toHaveLength(1);
      expect(statusWrite[0].contentType).toContain('application/merge-patch+json');
      expect(JSON.parse(statusWrite[0].body!)).toEqual({
        metadata: { resourceVersion: expect.any(String) },
        status: { phase: 'Pending', secretRevealed: false },
      });
      // Entity refs are not valid label values; the hash is.
      expect(entityRefLabelValue(ALICE)).toMatch(/^h[0-9a-f]{40}$/);
    });

    it('keeps the key in an immutable Secret owned by its APIKey, under data.api_key', async () => {
      await createProduct();
      const key = await store.createKey(newKey());
      await store.reviewKey(ref(key), {
        phase: 'Approved',
        reviewedBy: BOB,
        secret: 'the-key-value',
      });
      const secrets = fake
        .listObjects('v1', 'Secret', 'toystore')
        .filter(s => s.metadata!.ownerReferences?.[0]?.name === key.metadata.name);
      expect(secrets).toHaveLength(1);
      expect(secrets[0]).toMatchObject({
        type: 'Opaque',
        immutable: true,
        data: { api_key: Buffer.from('the-key-value').toString('base64') },
        metadata: {
          ownerReferences: [
            expect.objectContaining({
              kind: 'APIKey',
              name: key.metadata.name,
              uid: key.metadata.uid,
            }),
          ],
          annotations: {
            'secret.kuadrant.io/plan-id': 'gold',
            'secret.kuadrant.io/user-id': ALICE,
          },
        },
      });
      // Revealing it flips status.secretRevealed; deleting the key deletes the Secret now.
      expect(await store.revealSecret(ref(key))).toBe('the-key-value');
      expect(
        fake.getObject(DEVPORTAL, 'APIKey', 'toystore', key.metadata.name)!.status,
      ).toMatchObject({
        secretRevealed: true,
      });
      await store.deleteKey(ref(key));
      expect(
        fake.getObject('v1', 'Secret', 'toystore', secrets[0].metadata!.name!),
      ).toBeUndefined();
    });

    it("puts the approval's secretLabels on the key Secret, its own labels winning", async () => {
      await createProduct();
      const secretLabels = {
        app: 'toystore',
        'authorino.kuadrant.io/managed-by': 'authorino',
        // A policy cannot take over the store's labels.
        [MANAGED_BY_LABEL]: 'someone-else',
        [KEY_UID_LABEL]: 'forged',
        [PRODUCT_LABEL]: 'forged',
        'portal.backstage.io/extra': 'forged',
      };
      const expected = (key: { metadata: { uid?: string } }) => ({
        app: 'toystore',
        'authorino.kuadrant.io/managed-by': 'authorino',
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [KEY_UID_LABEL]: key.metadata.uid,
        [PRODUCT_LABEL]: 'toys',
      });
      const secretOf = (key: { metadata: { name: string } }) =>
        fake
          .listObjects('v1', 'Secret', 'toystore')
          .filter(s => s.metadata!.ownerReferences?.[0]?.name === key.metadata.name);

      // Reviewed approval.
      const reviewed = await store.createKey(newKey());
      await store.reviewKey(ref(reviewed), {
        phase: 'Approved',
        reviewedBy: BOB,
        secret: 'reviewed-key',
        secretLabels,
      });
      const [reviewedSecret] = secretOf(reviewed);
      expect(reviewedSecret.metadata!.labels).toEqual(expected(reviewed));

      // Automatic approval (created Approved).
      const automatic = await store.createKey({
        ...newKey(ALICE, 'silver'),
        approval: { reviewedBy: 'system', secret: 'automatic-key', secretLabels },
      });
      const [automaticSecret] = secretOf(automatic);
      expect(automaticSecret.metadata!.labels).toEqual(expected(automatic));

      // Without secretLabels: the store's labels only (as before).
      const plain = await store.createKey(newKey(ALICE, 'bronze'));
      await store.reviewKey(ref(plain), {
        phase: 'Approved',
        reviewedBy: BOB,
        secret: 'plain-key',
      });
      expect(secretOf(plain)[0].metadata!.labels).toEqual({
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [KEY_UID_LABEL]: plain.metadata.uid,
        [PRODUCT_LABEL]: 'toys',
      });
    });

    it("refuses labels and annotations under the reserved prefix, and reports the API server's 422 message", async () => {
      await expect(
        store.createProduct({
          namespace: 'toystore',
          name: 'toys',
          labels: { [OWNER_LABEL]: 'x' },
          annotations: { [OWNER_ANNOTATION]: BOB },
          spec,
        }),
      ).rejects.toMatchObject({ name: 'InputError', message: expect.stringContaining('reserved') });
      await expect(
        store.createProduct({
          namespace: 'toystore',
          name: 'toys',
          labels: { tier: 'not a valid label value!' },
          annotations: { [OWNER_ANNOTATION]: BOB },
          spec,
        }),
      ).rejects.toMatchObject({
        name: 'InputError',
        message: expect.stringContaining('metadata.labels'),
      });
      expect(fake.requests({ verb: 'create', resource: 'apiproducts' }).map(r => r.status)).toEqual(
        [422],
      );
    });
  });

  describe('ownership lists through label selectors', () => {
    beforeEach(() => start());

    it('lists owned products and keys with selectors, never an unfiltered list', async () => {
      await createProduct('toys', BOB);
      await createProduct('games', PAYMENTS);
      await store.createKey(newKey(ALICE, 'gold', 'toys'));
      await store.createKey(newKey(BOB, 'gold', 'games'));
      fake.clearRequestLog();

      const owned = await store.listKeys({
        ownedBy: { userRef: BOB, ownershipRefs: [BOB, PAYMENTS] },
      });
      expect(owned.map(k => k.spec.requestedBy.userId).sort()).toEqual([ALICE, BOB]);

      const lists = fake.requests({ verb: 'list' });
      expect(lists.every(r => (r.query.labelSelector ?? '') !== '')).toBe(true);
      expect(lists.map(r => [r.resource, r.query.labelSelector]).sort()).toEqual(
        [
          [
            'apiproducts',
            `${OWNER_LABEL} in (${[BOB, PAYMENTS].map(entityRefLabelValue).sort().join(',')})`,
          ],
          ['apikeys', `${REQUESTER_LABEL}=${entityRefLabelValue(BOB)}`],
          ['apikeys', `${PRODUCT_LABEL} in (games,toys)`],
        ].sort(),
      );

      fake.clearRequestLog();
      await store.listProducts({ ownerRefs: [PAYMENTS] });
      await store.listKeys({ requestedBy: ALICE, namespace: 'toystore' });
      expect(fake.requests({ verb: 'list' }).map(r => [r.path, r.query.labelSelector])).toEqual([
        [
          `/apis/devportal.kuadrant.io/v1alpha1/apiproducts`,
          `${OWNER_LABEL} in (${entityRefLabelValue(PAYMENTS)})`,
        ],
        [
          `/apis/devportal.kuadrant.io/v1alpha1/namespaces/toystore/apikeys`,
          `${REQUESTER_LABEL}=${entityRefLabelValue(ALICE)}`,
        ],
      ]);
    });

    it('asks nothing when the caller owns nothing to list', async () => {
      fake.clearRequestLog();
      expect(await store.listProducts({ ownerRefs: [] })).toEqual([]);
      expect(await store.listKeys({ ownedBy: { userRef: ALICE, ownershipRefs: [] } })).toEqual([]);
      expect(fake.requests({ verb: 'list', resource: 'apiproducts' })).toEqual([]);
      expect(fake.requests({ verb: 'list', resource: 'apikeys' })).toHaveLength(1);
    });
  });

  describe("pages through the API server's limit and continue", () => {
    beforeEach(() => start());

    it(
      'asks the API server for a page at a time, with the selector, continuing with its token',
      async () => {
        await createProduct();
        for (const tier of ['gold', 'silver', 'bronze']) {
          await store.createKey(newKey(ALICE, tier));
        }
        await store.createKey(newKey(BOB));
        fake.clearRequestLog();
        const first = await store.listKeysPage({ requestedBy: ALICE }, { limit: 2 });
        expect(first.items.map(k => k.spec.requestedBy.userId)).toEqual([ALICE, ALICE]);
        const lists = fake.requests({ verb: 'list', resource: 'apikeys' });
        expect(lists[0].query).toEqual({
          labelSelector: `${REQUESTER_LABEL}=${entityRefLabelValue(ALICE)}`,
          limit: '2',
        });
        // The peek for "more follow": one more object, from the page's continue token.
        expect(lists[1].query).toMatchObject({ limit: '1', continue: expect.any(String) });
        expect(lists).toHaveLength(2);

        const second = await store.listKeysPage(
          { requestedBy: ALICE },
          { limit: 2, cursor: first.cursor },
        );
        expect(second.items).toHaveLength(1);
        expect(second.cursor).toBeUndefined();
        expect([...first.items, ...second.items].map(k => k.spec.planTier).sort()).toEqual([
          'bronze',
          'gold',
          'silver',
        ]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'answers InputError, start again, when the API server no longer continues the token (410)',
      async () => {
        await createProduct();
        for (const tier of ['gold', 'silver', 'bronze']) {
          await store.createKey(newKey(ALICE, tier));
        }
        const first = await store.listKeysPage({}, { limit: 1 });
        expect(first.cursor).toBeDefined();
        // A write after the token's revision, then etcd compaction up to the latest one.
        await store.createKey(newKey(BOB));
        fake.compactHistory();
        await expect(
          store.listKeysPage({}, { limit: 1, cursor: first.cursor }),
        ).rejects.toMatchObject({
          name: 'InputError',
          message: expect.stringContaining('start the list again without continue'),
        });
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('compare-and-set under concurrency', () => {
    beforeEach(() => start());

    it(
      'lands exactly one of 50 concurrent reveal writes; the others get 409 and then "already revealed"',
      async () => {
        await createProduct();
        const key = await store.createKey(newKey());
        await store.reviewKey(ref(key), { phase: 'Approved', reviewedBy: BOB, secret: 'once' });
        fake.clearRequestLog();
        const results = await Promise.all(
          Array.from({ length: 50 }, () => outcome(store.revealSecret(ref(key)))),
        );
        expect(results.filter(r => r.ok)).toEqual([{ ok: true, value: 'once' }]);
        const writes = fake.requests({ verb: 'patch', resource: 'apikeys', subresource: 'status' });
        expect(writes.filter(w => w.status === 200)).toHaveLength(1);
        expect(writes.filter(w => w.status !== 200).every(w => w.status === 409)).toBe(true);
        for (const write of writes) {
          expect(JSON.parse(write.body!).metadata.resourceVersion).toEqual(expect.any(String));
        }
        for (const result of results.filter(r => !r.ok)) {
          expect(result).toMatchObject({
            error: { name: 'ConflictError', message: expect.stringContaining('already revealed') },
          });
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "leaves only the winning approval's Secret behind",
      async () => {
        await createProduct();
        const key = await store.createKey(newKey());
        const results = await Promise.all(
          ['a', 'b', 'c'].map(secret =>
            outcome(store.reviewKey(ref(key), { phase: 'Approved', reviewedBy: BOB, secret })),
          ),
        );
        expect(results.filter(r => r.ok)).toHaveLength(1);
        const secrets = fake
          .listObjects('v1', 'Secret', 'toystore')
          .filter(s => s.metadata!.ownerReferences?.[0]?.uid === key.metadata.uid);
        expect(secrets).toHaveLength(1);
        expect(await store.revealSecret(ref(key))).toBe(
          Buffer.from(secrets[0].data!.api_key, 'base64').toString(),
        );
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'fences an edit towards a tier when a new request for that tier takes the claim over',
      async () => {
        await createProduct();
        const silver = await store.createKey(newKey(ALICE, 'silver'));
        const goldClaim = claimName({ requester: ALICE, product: 'toys', planTier: 'gold' });
        // Hold the edit's spec write back until the new request has run.
        const specWrite = fake.hold({
          verb: 'patch',
          resource: 'apikeys',
          name: silver.metadata.name,
        });
        const edit = outcome(store.updatePendingKey(ref(silver), { planTier: 'gold' }));
        while (specWrite.hits === 0) await new Promise(resolve => setTimeout(resolve, 5));
        expect(fake.getObject('v1', 'ConfigMap', 'toystore', goldClaim)).toBeDefined();
        // The claim names the silver key, still Pending with silver: stale-looking, so the
        // new request takes it over, fencing the silver key first.
        const gold = await store.createKey(newKey(ALICE, 'gold'));
        specWrite.release();
        expect(await edit).toMatchObject({
          ok: false,
          error: {
            name: 'ConflictError',
            message: expect.stringContaining('already has a Pending request'),
          },
        });
        const pending = await store.listKeys({ requestedBy: ALICE, phase: 'Pending' });
        expect(pending.map(k => [k.metadata.name, k.spec.planTier]).sort()).toEqual(
          [
            [gold.metadata.name, 'gold'],
            [silver.metadata.name, 'silver'],
          ].sort(),
        );
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'keeps one Pending request per tier when edits and new requests race freely',
      async () => {
        await createProduct();
        for (let round = 0; round < 5; round++) {
          const user = `user:default/racer${round}`;
          const silver = await store.createKey(newKey(user, 'silver'));
          const [edit, create] = await Promise.all([
            outcome(store.updatePendingKey(ref(silver), { planTier: 'gold' })),
            outcome(store.createKey(newKey(user, 'gold'))),
          ]);
          const pending = await store.listKeys({ requestedBy: user, phase: 'Pending' });
          expect(pending.filter(k => k.spec.planTier === 'gold')).toHaveLength(1);
          expect([edit.ok, create.ok].filter(Boolean)).toHaveLength(1);
          expect(edit.ok ? create : edit).toMatchObject({ error: { name: 'ConflictError' } });
        }
      },
      TEST_TIMEOUT_MS,
    );

    it('takes over a stale Pending claim once the request left Pending', async () => {
      await createProduct();
      const first = await store.createKey(newKey());
      const claim = claimName({ requester: ALICE, product: 'toys', planTier: 'gold' });
      expect(fake.getObject('v1', 'ConfigMap', 'toystore', claim)?.data).toMatchObject({
        apiKeyName: first.metadata.name,
      });
      await store.reviewKey(ref(first), { phase: 'Rejected', reviewedBy: BOB });
      const second = await store.createKey(newKey());
      expect(fake.getObject('v1', 'ConfigMap', 'toystore', claim)?.data).toMatchObject({
        apiKeyName: second.metadata.name,
      });
      // Deleting the key lets the garbage collector take its claim along.
      await store.deleteKey(ref(second));
      expect(fake.getObject('v1', 'ConfigMap', 'toystore', claim)).toBeUndefined();
    });
  });

  describe('cascade delete', () => {
    beforeEach(() => start());

    it(
      'finishes on retry after failing part-way, and refuses new keys meanwhile',
      async () => {
        await createProduct();
        const approved = await store.createKey(newKey(ALICE, 'gold'));
        await store.reviewKey(ref(approved), { phase: 'Approved', reviewedBy: BOB, secret: 's1' });
        const pending = await store.createKey(newKey(ALICE, 'silver'));
        // The first key delete goes through, the second fails with a server error.
        let keyDeletes = 0;
        fake.failNext(
          r => r.verb === 'delete' && r.resource === 'apikeys' && ++keyDeletes === 2,
          500,
        );
        await expect(
          store.deleteProduct({ namespace: 'toystore', name: 'toys' }),
        ).rejects.toMatchObject({
          name: 'ServiceUnavailableError',
        });
        expect(await store.getProduct({ namespace: 'toystore', name: 'toys' })).toBeDefined();
        expect(await store.listKeys({ namespace: 'toystore' })).toHaveLength(1);
        await expect(store.createKey(newKey('user:default/dave'))).rejects.toMatchObject({
          name: 'NotFoundError',
        });

        await store.deleteProduct({ namespace: 'toystore', name: 'toys' });
        expect(await store.getProduct({ namespace: 'toystore', name: 'toys' })).toBeUndefined();
        expect(await store.listKeys({ namespace: 'toystore' })).toEqual([]);
        expect(fake.listObjects('v1', 'Secret', 'toystore')).toEqual([]);
        expect([approved, pending].every(k => k.metadata.namespace === 'toystore')).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('errors of the API server, mapped in one place', () => {
    it('answers 503 for a 500 of the API server', async () => {
      await start();
      await createProduct();
      fake.failNext({ verb: 'get', resource: 'apiproducts' }, 500, {
        message: 'etcdserver: leader changed',
      });
      await expect(store.getProduct({ namespace: 'toystore', name: 'toys' })).rejects.toMatchObject(
        {
          name: 'ServiceUnavailableError',
          message: expect.stringContaining('etcdserver: leader changed'),
        },
      );
      fake.failNext({ verb: 'list', resource: 'apikeys' }, 429);
      await expect(store.listKeys({})).rejects.toMatchObject({ name: 'ServiceUnavailableError' });
      await expect(
        store.getProduct({ namespace: 'toystore', name: 'toys' }),
      ).resolves.toBeDefined();
    });

    it(
      'answers 503 within the configured timeout when the API server hangs',
      async () => {
        await start({ requestTimeout: { milliseconds: 400 } });
        await createProduct();
        const key = await store.createKey(newKey());
        await store.reviewKey(ref(key), { phase: 'Approved', reviewedBy: BOB, secret: 'kept' });
        fake.hangNext({ verb: 'patch', resource: 'apikeys', subresource: 'status' });
        const started = Date.now();
        await expect(store.revealSecret(ref(key))).rejects.toMatchObject({
          name: 'ServiceUnavailableError',
          message: expect.stringContaining('within 400 ms'),
        });
        // The API server never answers a hung request: only the client's timeout can end it (the
        // message names it), and not before it is due.
        expect(Date.now() - started).toBeGreaterThanOrEqual(350);
        // The hung write never landed, so the secret is still there for the next try.
        expect(await store.revealSecret(ref(key))).toBe('kept');
      },
      TEST_TIMEOUT_MS,
    );

    it('answers 503 and logs, without blaming the user, when the cluster refuses the portal (403)', async () => {
      await start();
      fake.forbid({ verb: 'list', resource: 'apiproducts' });
      const error = await store.listProducts({}).catch(e => e);
      expect(error).toMatchObject({ name: 'ServiceUnavailableError' });
      expect(error.message).not.toMatch(/forbidden|you/i);
      expect(logger.error).toHaveBeenCalledWith(
        expect.stringContaining(
          'cannot list resource "apiproducts" in API group "devportal.kuadrant.io" at the cluster scope',
        ),
      );
      fake.clearFaults();
      fake.failNext({ verb: 'get', resource: 'apikeys' }, 401);
      await expect(store.getKey({ namespace: 'toystore', name: 'k' })).rejects.toMatchObject({
        name: 'ServiceUnavailableError',
      });
      expect(logger.error).toHaveBeenCalledTimes(2);
    });

    it('answers 503 when the API server is unreachable', async () => {
      await start();
      await fake.close();
      await expect(store.listProducts({})).rejects.toMatchObject({
        name: 'ServiceUnavailableError',
        message: expect.stringContaining('cannot be reached'),
      });
    });

    it('maps an injected 409 and 404 like real ones', async () => {
      await start();
      await createProduct();
      const product = (await store.getProduct({ namespace: 'toystore', name: 'toys' }))!;
      fake.failNext({ verb: 'update', resource: 'apiproducts' }, 409);
      await expect(store.replaceProduct(product)).rejects.toMatchObject({ name: 'ConflictError' });
      fake.failNext({ verb: 'get', resource: 'apiproducts' }, 404);
      expect(await store.getProduct({ namespace: 'toystore', name: 'toys' })).toBeUndefined();
    });
  });

  describe('namespace allow-list', () => {
    beforeEach(() => start({ namespaces: ['toystore'] }));

    it('serves only the listed namespaces, listing them one by one', async () => {
      await createProduct();
      await expect(createProduct('toys', BOB, 'other')).rejects.toMatchObject({
        name: 'InputError',
        message: expect.stringContaining('not served'),
      });
      fake.load([
        {
          apiVersion: DEVPORTAL,
          kind: 'APIProduct',
          metadata: {
            namespace: 'other',
            name: 'hidden',
            annotations: { [OWNER_ANNOTATION]: BOB },
          },
          spec,
        },
      ]);
      fake.clearRequestLog();
      expect((await store.listProducts({})).map(p => p.metadata.name)).toEqual(['toys']);
      expect(await store.getProduct({ namespace: 'other', name: 'hidden' })).toBeUndefined();
      expect(await store.listProducts({ namespace: 'other' })).toEqual([]);
      expect(fake.requests().map(r => r.path)).toEqual([
        '/apis/devportal.kuadrant.io/v1alpha1/namespaces/toystore/apiproducts',
      ]);
    });
  });
});
