import path from 'node:path';
import { startFakeKubeApiServer } from './index';
import { clientsFor, statusOf } from './testClients';

const TOYSTORE = path.resolve(__dirname, '../../../examples/toystore.yaml');

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
---
apiVersion: example.com/v1
kind: Widget
metadata: { name: w1, namespace: shop, labels: { color: blue } }
spec: { size: 3 }
status: { ready: true }
`;

describe('seeding from manifests', () => {
  it('loads examples/toystore.yaml, creating its namespace, readable through client-node', async () => {
    const fake = await startFakeKubeApiServer();
    try {
      const loaded = await fake.loadFile(TOYSTORE);
      expect(loaded.length).toBeGreaterThanOrEqual(4);
      const c = clientsFor(fake);
      const routes = await c.custom.listNamespacedCustomObject({
        group: 'gateway.networking.k8s.io',
        version: 'v1',
        namespace: 'toystore',
        plural: 'httproutes',
        labelSelector: 'app=toystore',
      });
      expect(routes.items.map((r: any) => r.metadata.name)).toEqual(['toystore', 'toystore-admin']);
      const plans = await c.custom.getNamespacedCustomObject({
        group: 'extensions.kuadrant.io',
        version: 'v1alpha1',
        namespace: 'toystore',
        plural: 'planpolicies',
        name: 'toystore-plans',
      });
      expect(plans.spec.plans.map((p: any) => p.tier)).toEqual(['gold', 'silver', 'bronze']);
      const ns = await c.core.readNamespace({ name: 'toystore' });
      expect(ns.status?.phase).toBe('Active');
    } finally {
      await fake.close();
    }
  });

  it('registers the types of a CustomResourceDefinition and keeps status written by the manifest', async () => {
    const fake = await startFakeKubeApiServer();
    try {
      const c = clientsFor(fake);
      const before = await statusOf(
        c.custom.listNamespacedCustomObject({
          group: 'example.com',
          version: 'v1',
          namespace: 'shop',
          plural: 'widgets',
        }),
      );
      expect(before).toEqual({ code: 404, body: '404 page not found\n' });

      fake.load(CRD);
      const widget = await c.objects.read({
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w1', namespace: 'shop' },
      });
      expect((widget as any).status).toEqual({ ready: true });
      expect((widget as any).spec).toEqual({ size: 3 });
    } finally {
      await fake.close();
    }
  });
});
