/*
 * The namespaces a Kubernetes store serves (`portal.kubernetes.namespaces`). With the
 * allow-list, other namespaces do not exist for the portal: reads there find nothing,
 * lists skip them and creates there are refused (InputError naming the list).
 */
import { InputError } from '@backstage/errors';
import type { ObjectRef } from '@devportal/plugin-portal-common';
import type {
  CustomResourceType,
  KubeObject,
  KubernetesApi,
  NamespaceScope,
} from './kubernetesClient';

/** The namespace allow-list of a Kubernetes store; every namespace without one. */
export class ServedNamespaces {
  /** `namespaces`: the allow-list, or undefined to serve every namespace. */
  constructor(private readonly namespaces: string[] | undefined) {}

  /** Whether the portal serves `namespace`. */
  isServed(namespace: string): boolean {
    return this.namespaces === undefined || this.namespaces.includes(namespace);
  }

  /** The namespaces a list covers; `[]` when the requested one is not served. */
  scope(namespace: string | undefined): NamespaceScope {
    if (namespace === undefined) {
      return this.namespaces;
    }
    return this.isServed(namespace) ? [namespace] : [];
  }

  /** InputError when `namespace` is not served (for creates). */
  assertServed(namespace: string): void {
    if (!this.isServed(namespace)) {
      throw new InputError(
        `Namespace ${namespace} is not served by this portal (portal.kubernetes.namespaces: ${this.namespaces!.join(', ')})`,
      );
    }
  }

  /** The custom object `ref`; undefined when it does not exist or its namespace is not served. */
  async getCustom(
    api: KubernetesApi,
    type: CustomResourceType,
    ref: ObjectRef,
  ): Promise<KubeObject | undefined> {
    return this.isServed(ref.namespace) ? api.getCustom(type, ref.namespace, ref.name) : undefined;
  }
}
