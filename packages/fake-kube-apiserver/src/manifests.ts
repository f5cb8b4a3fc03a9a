/**
 * Seeding from Kubernetes manifest YAML: multi-document files, `kind: List`,
 * and CustomResourceDefinitions (which register their resource types, so the
 * CRDs a repository ships can be loaded as they are).
 */
import yaml from 'js-yaml';
import { ObjectStore } from './ObjectStore';
import { KubeObject, resourcesFromCrd } from './resources';
import { ResourceRegistry } from './ResourceRegistry';
import { badRequest } from './statusErrors';

/** Parses multi-document YAML (or JSON) into objects; `kind: List` is flattened. */
export function parseManifests(text: string): KubeObject[] {
  const docs = yaml.loadAll(text) as unknown[];
  const objects: KubeObject[] = [];
  for (const doc of docs) {
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== 'object' || Array.isArray(doc)) {
      throw badRequest('every YAML document must be a Kubernetes object');
    }
    const obj = doc as KubeObject;
    if (
      obj.kind === 'List' ||
      (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items))
    ) {
      objects.push(...(obj.items as KubeObject[]));
    } else {
      objects.push(obj);
    }
  }
  return objects;
}

/** Options of {@link applyManifests}. */
export interface ApplyManifestsOptions {
  /** Create a Namespace for objects whose namespace does not exist yet. */
  createNamespaces: boolean;
  /** Namespace for namespaced objects that name none. */
  defaultNamespace: string;
}

/**
 * Creates or replaces each object through the store (so it gets a uid,
 * resourceVersion and a watch event), keeping any `status` from the manifest
 * as a controller would have written it.
 */
export function applyManifests(
  store: ObjectStore,
  registry: ResourceRegistry,
  objects: KubeObject[],
  options: ApplyManifestsOptions,
): KubeObject[] {
  const applied: KubeObject[] = [];
  for (const raw of objects) {
    if (
      raw.apiVersion?.startsWith('apiextensions.k8s.io/') &&
      raw.kind === 'CustomResourceDefinition'
    ) {
      for (const rt of resourcesFromCrd(raw)) registry.register(rt);
      continue;
    }
    const rt = registry.findByKind(raw.apiVersion ?? '', raw.kind ?? '');
    if (!rt) {
      throw badRequest(
        `no resource type registered for apiVersion ${raw.apiVersion} kind ${raw.kind} (register it or load its CustomResourceDefinition first)`,
      );
    }
    const obj = structuredClone(raw);
    obj.metadata = obj.metadata ?? {};
    for (const serverField of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'generation',
      'managedFields',
    ]) {
      delete obj.metadata[serverField];
    }
    const namespace = rt.namespaced ? (obj.metadata.namespace ?? options.defaultNamespace) : '';
    if (rt.namespaced) {
      obj.metadata.namespace = namespace;
      const nsType = registry.find('', 'v1', 'namespaces');
      if (options.createNamespaces && nsType && !store.peek(nsType, '', namespace)) {
        store.create(nsType, '', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: namespace },
        });
      }
    }
    const existing = store.peek(rt, namespace, obj.metadata.name ?? '');
    let result = existing
      ? store.update(rt, namespace, obj.metadata.name, {
          ...obj,
          metadata: { ...obj.metadata, resourceVersion: existing.metadata!.resourceVersion },
        })
      : store.create(rt, namespace, obj);
    if (raw.status !== undefined && rt.statusSubresource) {
      result = store.update(
        rt,
        namespace,
        result.metadata!.name,
        { ...result, status: raw.status },
        { subresource: 'status' },
      );
    }
    applied.push(result);
  }
  return applied;
}
