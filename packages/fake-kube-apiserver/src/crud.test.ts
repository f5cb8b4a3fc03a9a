import * as k8s from '@kubernetes/client-node';
import { FakeKubeApiServer, startFakeKubeApiServer } from './index';
import { apiKeys, apiProducts, clientsFor, fetchAs, mergePatch, statusOf } from './testClients';

const NS = 'team-a';

function apiKey(
  name: string,
  labels: Record<string, string> = {},
  spec: object = { plan: 'gold' },
) {
  return {
    apiVersion: 'devportal.kuadrant.io/v1alpha1',
    kind: 'APIKey',
    metadata: { name, ...(Object.keys(labels).length > 0 ? { labels } : {}) },
    spec,
  };
}

describe('fake kube-apiserver driven by the real @kubernetes/client-node', () => {
  let fake: FakeKubeApiServer;
  let c: ReturnType<typeof clientsFor>;

  beforeEach(async () => {
    fake = await startFakeKubeApiServer({ namespaces: ['default', NS] });
    c = clientsFor(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  describe('create and get', () => {
    it('sets uid, resourceVersion, creationTimestamp and generation, and drops status on create', async () => {
      const created = await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: { ...apiKey('k1'), status: { phase: 'Approved' } },
      });
      expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.metadata.resourceVersion).toBe(fake.resourceVersion());
      expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(created.metadata.generation).toBe(1);
      expect(created.metadata.namespace).toBe(NS);
      expect(created.status).toBeUndefined();

      const read = await c.custom.getNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
      });
      expect(read).toEqual(created);
    });

    it('answers 409 AlreadyExists with the real Status shape', async () => {
      await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: apiKey('k1'),
      });
      const { code, body } = await statusOf(
        c.custom.createNamespacedCustomObject({ ...apiKeys, namespace: NS, body: apiKey('k1') }),
      );
      expect(code).toBe(409);
      expect(body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'apikeys.devportal.kuadrant.io "k1" already exists',
        reason: 'AlreadyExists',
        details: { name: 'k1', group: 'devportal.kuadrant.io', kind: 'apikeys' },
        code: 409,
      });
    });

    it('generates a name from generateName', async () => {
      const created = await c.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { generateName: 'apikey-' }, stringData: { api_key: 's3cret' } },
      });
      expect(created.metadata!.name).toMatch(/^apikey-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(created.data).toEqual({ api_key: Buffer.from('s3cret').toString('base64') });
      expect(created.type).toBe('Opaque');
    });

    it('answers 422 Invalid for a missing name, a bad DNS-1123 name and a bad label value', async () => {
      const missing = await statusOf(
        c.custom.createNamespacedCustomObject({ ...apiKeys, namespace: NS, body: apiKey('') }),
      );
      expect(missing.code).toBe(422);
      expect(missing.body.reason).toBe('Invalid');
      expect(missing.body.message).toBe(
        'APIKey.devportal.kuadrant.io "" is invalid: metadata.name: Required value: name or generateName is required',
      );

      const badName = await statusOf(
        c.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'Not_Valid' } } }),
      );
      expect(badName.code).toBe(422);
      expect(badName.body.message).toContain(
        'Secret "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain must consist of',
      );
      expect(badName.body.details.causes).toEqual([
        expect.objectContaining({ reason: 'FieldValueInvalid', field: 'metadata.name' }),
      ]);

      // Backstage entity refs are not label values: a store must encode them.
      const badLabel = await statusOf(
        c.custom.createNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          body: apiKey('k2', { 'portal.kuadrant.io/owner': 'user:default/alice' }),
        }),
      );
      expect(badLabel.code).toBe(422);
      expect(badLabel.body.message).toContain(
        'metadata.labels: Invalid value: "user:default/alice": a valid label must be an empty string',
      );
    });

    it('answers 404 for a namespace that does not exist, and for a missing object', async () => {
      const noNamespace = await statusOf(
        c.custom.createNamespacedCustomObject({
          ...apiKeys,
          namespace: 'nope',
          body: apiKey('k1'),
        }),
      );
      expect(noNamespace.code).toBe(404);
      expect(noNamespace.body.message).toBe('namespaces "nope" not found');

      const missing = await statusOf(
        c.custom.getNamespacedCustomObject({ ...apiKeys, namespace: NS, name: 'ghost' }),
      );
      expect(missing.code).toBe(404);
      expect(missing.body).toMatchObject({
        reason: 'NotFound',
        message: 'apikeys.devportal.kuadrant.io "ghost" not found',
        details: { name: 'ghost', group: 'devportal.kuadrant.io', kind: 'apikeys' },
      });
    });

    it('rejects Secret data that is not base64, as the real decoder does', async () => {
      const { code, body } = await statusOf(
        c.objects.create({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 's1', namespace: NS },
          data: { api_key: 'not base64!' },
        } as k8s.KubernetesObject),
      );
      expect(code).toBe(400);
      expect(body.message).toBe(
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
      );
    });

    it('refuses a resourceVersion on create', async () => {
      const body = { ...apiKey('k1'), metadata: { name: 'k1', resourceVersion: '5' } };
      const { code, body: status } = await statusOf(
        c.custom.createNamespacedCustomObject({ ...apiKeys, namespace: NS, body }),
      );
      expect(code).toBe(500);
      expect(status.message).toBe('resourceVersion should not be set on objects to be created');
    });
  });

  describe('list', () => {
    beforeEach(async () => {
      const labels: Array<[string, Record<string, string>]> = [
        ['k-alice-1', { owner: 'alice', tier: 'gold' }],
        ['k-alice-2', { owner: 'alice', tier: 'silver' }],
        ['k-bob-1', { owner: 'bob', tier: 'gold' }],
        ['k-nolabel', {}],
      ];
      for (const [name, l] of labels) {
        await c.custom.createNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          body: apiKey(name, l),
        });
      }
      await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: 'default',
        body: apiKey('k-other-ns', { owner: 'alice' }),
      });
    });

    const names = (list: any) => list.items.map((i: any) => i.metadata.name);
    const list = (labelSelector?: string, fieldSelector?: string) =>
      c.custom.listNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        labelSelector,
        fieldSelector,
      });

    it('filters with equality, inequality, set-based and existence label selectors', async () => {
      expect(names(await list('owner=alice'))).toEqual(['k-alice-1', 'k-alice-2']);
      expect(names(await list('owner==alice,tier=gold'))).toEqual(['k-alice-1']);
      expect(names(await list('owner!=alice'))).toEqual(['k-bob-1', 'k-nolabel']);
      expect(names(await list('tier in (gold, silver),owner notin (bob)'))).toEqual([
        'k-alice-1',
        'k-alice-2',
      ]);
      expect(names(await list('owner'))).toEqual(['k-alice-1', 'k-alice-2', 'k-bob-1']);
      expect(names(await list('!owner'))).toEqual(['k-nolabel']);
    });

    it('filters with field selectors on name and namespace', async () => {
      expect(names(await list(undefined, 'metadata.name=k-bob-1'))).toEqual(['k-bob-1']);
      expect(
        names(await list(undefined, 'metadata.name!=k-bob-1,metadata.namespace=team-a')),
      ).toHaveLength(3);
      const unsupported = await statusOf(list(undefined, 'spec.plan=gold'));
      expect(unsupported).toMatchObject({
        code: 400,
        body: { message: 'field label not supported: spec.plan' },
      });
    });

    it('lists across namespaces on the cluster-wide path', async () => {
      const all = await c.custom.listClusterCustomObject({
        ...apiKeys,
        labelSelector: 'owner=alice',
      });
      expect(all.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([
        'default/k-other-ns',
        'team-a/k-alice-1',
        'team-a/k-alice-2',
      ]);
    });

    it('reports the current resourceVersion and answers 400 for a malformed selector', async () => {
      const result = await list();
      expect(result.metadata.resourceVersion).toBe(fake.resourceVersion());
      expect(result.kind).toBe('APIKeyList');
      const bad = await statusOf(list('owner in alice'));
      expect(bad.code).toBe(400);
      expect(bad.body.reason).toBe('BadRequest');
      expect(bad.body.message).toContain(
        "unable to parse requirement: found 'alice', expected: '('",
      );
    });

    it('pages with limit and continue', async () => {
      const first = await c.custom.listNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        limit: 3,
      });
      expect(names(first)).toEqual(['k-alice-1', 'k-alice-2', 'k-bob-1']);
      expect(first.metadata.remainingItemCount).toBe(1);
      const second = await c.custom.listNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        limit: 3,
        _continue: first.metadata.continue,
      });
      expect(names(second)).toEqual(['k-nolabel']);
      expect(second.metadata.continue).toBeUndefined();
    });

    it('records the label selector in the request log, so tests can assert no full list was made', async () => {
      fake.clearRequestLog();
      await list('owner=alice');
      expect(fake.requests({ verb: 'list', resource: 'apikeys' })).toEqual([
        expect.objectContaining({
          method: 'GET',
          path: `/apis/devportal.kuadrant.io/v1alpha1/namespaces/${NS}/apikeys`,
          query: { labelSelector: 'owner=alice' },
          namespace: NS,
          status: 200,
        }),
      ]);
    });

    it('omits kind and apiVersion on items of built-in lists, as typed lists do', async () => {
      await c.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 's1' } } });
      const secrets = JSON.parse(
        await (await fetchAs(fake, `/api/v1/namespaces/${NS}/secrets`)).text(),
      );
      expect(secrets).toMatchObject({ kind: 'SecretList', apiVersion: 'v1' });
      expect(secrets.items[0].kind).toBeUndefined();
      const keys = JSON.parse(
        await (
          await fetchAs(fake, `/apis/devportal.kuadrant.io/v1alpha1/namespaces/${NS}/apikeys`)
        ).text(),
      );
      expect(keys.items[0].kind).toBe('APIKey');
    });
  });

  describe('updates with compare-and-set on resourceVersion', () => {
    let created: any;
    beforeEach(async () => {
      created = await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: apiKey('k1', { owner: 'alice' }),
      });
    });

    it('merge-patches with the content type set per call, bumping resourceVersion and generation', async () => {
      const patched = await c.custom.patchNamespacedCustomObject(
        {
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { spec: { plan: 'silver' }, metadata: { labels: { tier: 'x' } } },
        },
        mergePatch(),
      );
      expect(patched.spec).toEqual({ plan: 'silver' });
      expect(patched.metadata.labels).toEqual({ owner: 'alice', tier: 'x' });
      expect(Number(patched.metadata.resourceVersion)).toBeGreaterThan(
        Number(created.metadata.resourceVersion),
      );
      expect(patched.metadata.generation).toBe(2);

      // A label-only change is metadata: generation stays.
      const relabelled = await c.custom.patchNamespacedCustomObject(
        { ...apiKeys, namespace: NS, name: 'k1', body: { metadata: { labels: { tier: null } } } },
        mergePatch(),
      );
      expect(relabelled.metadata.labels).toEqual({ owner: 'alice' });
      expect(relabelled.metadata.generation).toBe(2);
    });

    it("answers 400 when a merge-patch body is sent with client-node's default JSON-patch content type", async () => {
      const { code, body } = await statusOf(
        c.custom.patchNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { spec: { plan: 'x' } },
        }),
      );
      expect(code).toBe(400);
      expect(body.message).toBe(
        'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      );
    });

    it('treats metadata.resourceVersion in a merge patch as a precondition (409 when stale)', async () => {
      const stale = created.metadata.resourceVersion;
      await c.custom.patchNamespacedCustomObject(
        {
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { spec: { plan: 'silver' }, metadata: { resourceVersion: stale } },
        },
        mergePatch(),
      );
      const { code, body } = await statusOf(
        c.custom.patchNamespacedCustomObject(
          {
            ...apiKeys,
            namespace: NS,
            name: 'k1',
            body: { spec: { plan: 'bronze' }, metadata: { resourceVersion: stale } },
          },
          mergePatch(),
        ),
      );
      expect(code).toBe(409);
      expect(body).toMatchObject({
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on apikeys.devportal.kuadrant.io "k1": the object has been modified; please apply your changes to the latest version and try again',
      });
      expect(fake.getObject('devportal.kuadrant.io/v1alpha1', 'APIKey', NS, 'k1')?.spec.plan).toBe(
        'silver',
      );
    });

    it('applies JSON patches, with test operations as preconditions (422 when they fail)', async () => {
      const patched = await c.custom.patchNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
        body: [
          { op: 'test', path: '/spec/plan', value: 'gold' },
          { op: 'replace', path: '/spec/plan', value: 'silver' },
          { op: 'add', path: '/metadata/labels/requester', value: 'bob' },
        ],
      });
      expect(patched.spec.plan).toBe('silver');
      expect(patched.metadata.labels.requester).toBe('bob');
      const failed = await statusOf(
        c.custom.patchNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: [
            { op: 'test', path: '/spec/plan', value: 'gold' },
            { op: 'replace', path: '/spec/plan', value: 'x' },
          ],
        }),
      );
      expect(failed.code).toBe(422);
    });

    it('replaces with PUT only at the current resourceVersion, and requires one for custom resources', async () => {
      const current = await c.custom.getNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
      });
      const replaced = await c.custom.replaceNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
        body: { ...current, spec: { plan: 'bronze' } },
      });
      expect(replaced.spec.plan).toBe('bronze');

      const stale = await statusOf(
        c.custom.replaceNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { ...current, spec: { plan: 'x' } },
        }),
      );
      expect(stale.code).toBe(409);
      expect(stale.body.reason).toBe('Conflict');

      const { resourceVersion: _rv, ...metaWithoutVersion } = current.metadata;
      const unconditional = await statusOf(
        c.custom.replaceNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { ...current, metadata: metaWithoutVersion },
        }),
      );
      expect(unconditional.code).toBe(422);
      expect(unconditional.body.message).toBe(
        'APIKey.devportal.kuadrant.io "k1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      );
    });

    it('does not bump resourceVersion for a write that changes nothing', async () => {
      const before = fake.resourceVersion();
      const same = await c.custom.patchNamespacedCustomObject(
        { ...apiKeys, namespace: NS, name: 'k1', body: { spec: { plan: 'gold' } } },
        mergePatch(),
      );
      expect(same.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
      expect(fake.resourceVersion()).toBe(before);
    });

    it('patches built-in kinds through KubernetesObjectApi with an explicit patch strategy', async () => {
      await c.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 's1' }, stringData: { a: '1' } },
      });
      const patched = await c.objects.patch(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 's1', namespace: NS },
          stringData: { b: '2' },
        } as k8s.KubernetesObject,
        undefined,
        undefined,
        undefined,
        undefined,
        k8s.PatchStrategy.MergePatch,
      );
      expect((patched as k8s.V1Secret).data).toEqual({ a: 'MQ==', b: 'Mg==' });
    });
  });

  describe('status subresource', () => {
    beforeEach(async () => {
      await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: apiKey('k1'),
      });
    });

    it('changes only status through /status, and ignores status on main-resource writes', async () => {
      const withStatus = await c.custom.patchNamespacedCustomObjectStatus(
        {
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: {
            status: { phase: 'Approved' },
            spec: { plan: 'ignored' },
            metadata: { labels: { ignored: 'yes' } },
          },
        },
        mergePatch(),
      );
      expect(withStatus.status).toEqual({ phase: 'Approved' });
      expect(withStatus.spec).toEqual({ plan: 'gold' });
      expect(withStatus.metadata.labels).toBeUndefined();
      expect(withStatus.metadata.generation).toBe(1);

      const mainWrite = await c.custom.patchNamespacedCustomObject(
        {
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { status: { phase: 'Rejected' }, spec: { plan: 'silver' } },
        },
        mergePatch(),
      );
      expect(mainWrite.status).toEqual({ phase: 'Approved' });
      expect(mainWrite.spec).toEqual({ plan: 'silver' });
    });

    it('compare-and-sets status with PUT /status', async () => {
      const current = await c.custom.getNamespacedCustomObjectStatus({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
      });
      const first = await c.custom.replaceNamespacedCustomObjectStatus({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
        body: { ...current, status: { revealed: true } },
      });
      expect(first.status).toEqual({ revealed: true });
      // A second reader that read the same version loses: the secret is revealed once.
      const second = await statusOf(
        c.custom.replaceNamespacedCustomObjectStatus({
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { ...current, status: { revealed: true } },
        }),
      );
      expect(second.code).toBe(409);
    });

    it('answers 404 for /status on a kind without the subresource', async () => {
      await c.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 's1' } } });
      const res = await fetchAs(fake, `/api/v1/namespaces/${NS}/secrets/s1/status`);
      expect(res.status).toBe(404);
    });
  });

  describe('delete', () => {
    it('answers 404 for a missing object and 409 for a stale precondition', async () => {
      const missing = await statusOf(
        c.custom.deleteNamespacedCustomObject({ ...apiKeys, namespace: NS, name: 'ghost' }),
      );
      expect(missing.code).toBe(404);

      const created = await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: apiKey('k1'),
      });
      await c.custom.patchNamespacedCustomObject(
        { ...apiKeys, namespace: NS, name: 'k1', body: { spec: { plan: 'x' } } },
        mergePatch(),
      );
      const stale = await statusOf(
        c.custom.deleteNamespacedCustomObject({
          ...apiKeys,
          namespace: NS,
          name: 'k1',
          body: { preconditions: { resourceVersion: created.metadata.resourceVersion } },
        }),
      );
      expect(stale.code).toBe(409);
      expect(stale.body.reason).toBe('Conflict');
      expect(stale.body.message).toContain('Precondition failed: ResourceVersion in precondition');

      await c.custom.deleteNamespacedCustomObject({ ...apiKeys, namespace: NS, name: 'k1' });
      expect(fake.getObject('devportal.kuadrant.io/v1alpha1', 'APIKey', NS, 'k1')).toBeUndefined();
    });

    it('garbage-collects dependents: deleting an APIKey deletes the Secret it owns', async () => {
      const key = await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: apiKey('k1'),
      });
      const ownerReferences = [
        {
          apiVersion: 'devportal.kuadrant.io/v1alpha1',
          kind: 'APIKey',
          name: 'k1',
          uid: key.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ];
      await c.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'k1-secret', ownerReferences }, stringData: { api_key: 'x' } },
      });
      await c.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'unrelated' } },
      });

      await c.custom.deleteNamespacedCustomObject({ ...apiKeys, namespace: NS, name: 'k1' });
      const left = await c.core.listNamespacedSecret({ namespace: NS });
      expect(left.items.map(s => s.metadata!.name)).toEqual(['unrelated']);
    });

    it('orphans dependents with propagationPolicy Orphan', async () => {
      const product = await c.custom.createNamespacedCustomObject({
        ...apiProducts,
        namespace: NS,
        body: {
          apiVersion: 'devportal.kuadrant.io/v1alpha1',
          kind: 'APIProduct',
          metadata: { name: 'p1' },
          spec: {},
        },
      });
      await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: {
          ...apiKey('k1'),
          metadata: {
            name: 'k1',
            ownerReferences: [
              {
                apiVersion: 'devportal.kuadrant.io/v1alpha1',
                kind: 'APIProduct',
                name: 'p1',
                uid: product.metadata.uid,
              },
            ],
          },
        },
      });
      await c.custom.deleteNamespacedCustomObject({
        ...apiProducts,
        namespace: NS,
        name: 'p1',
        propagationPolicy: 'Orphan',
      });
      const orphan = await c.custom.getNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
      });
      expect(orphan.metadata.ownerReferences).toBeUndefined();
    });

    it('holds an object with finalizers until the last finalizer is removed', async () => {
      await c.custom.createNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        body: {
          ...apiKey('k1'),
          metadata: { name: 'k1', finalizers: ['devportal.kuadrant.io/cleanup'] },
        },
      });
      const deleting = await c.custom.deleteNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
      });
      expect(deleting.metadata.deletionTimestamp).toBeDefined();
      const still = await c.custom.getNamespacedCustomObject({
        ...apiKeys,
        namespace: NS,
        name: 'k1',
      });
      expect(still.metadata.deletionTimestamp).toBeDefined();

      await c.custom.patchNamespacedCustomObject(
        { ...apiKeys, namespace: NS, name: 'k1', body: { metadata: { finalizers: null } } },
        mergePatch(),
      );
      const gone = await statusOf(
        c.custom.getNamespacedCustomObject({ ...apiKeys, namespace: NS, name: 'k1' }),
      );
      expect(gone.code).toBe(404);
    });

    it('deletes a labelled collection, and changes nothing with dryRun=All', async () => {
      await c.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'a', labels: { app: 'x' } } },
      });
      await c.core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'b', labels: { app: 'y' } } },
      });
      await c.core.deleteNamespacedSecret({ namespace: NS, name: 'b', dryRun: 'All' });
      await c.core.deleteCollectionNamespacedSecret({ namespace: NS, labelSelector: 'app=x' });
      const left = await c.core.listNamespacedSecret({ namespace: NS });
      expect(left.items.map(i => i.metadata!.name)).toEqual(['b']);
    });

    it('answers 405 to a create on the cluster-wide path of a namespaced kind', async () => {
      const { code, body } = await statusOf(
        c.custom.createClusterCustomObject({ ...apiKeys, body: apiKey('k1') }),
      );
      expect(code).toBe(405);
      expect(body.reason).toBe('MethodNotAllowed');
    });
  });

  describe('discovery', () => {
    it('lets KubernetesObjectApi resolve kinds to plurals and scope', async () => {
      const created = await c.objects.create({
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPServerRegistration',
        metadata: { name: 'weather', namespace: NS },
        spec: { toolPrefix: 'weather_' },
      } as k8s.KubernetesObject);
      expect(created.metadata!.uid).toBeDefined();
      const ns = await c.objects.read({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NS },
      });
      expect((ns as k8s.V1Namespace).status?.phase).toBe('Active');
      expect(fake.requests(r => r.path === '/apis/mcp.kuadrant.io/v1alpha1')).toHaveLength(1);
    });

    it('answers an unknown group with a plain 404 page, like a cluster without the CRD', async () => {
      const res = await fetchAs(fake, '/apis/example.com/v1/namespaces/default/widgets');
      expect(res.status).toBe(404);
      expect(await res.text()).toBe('404 page not found\n');
    });
  });
});
