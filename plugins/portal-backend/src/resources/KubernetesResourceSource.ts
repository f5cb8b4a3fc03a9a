/*
 * KubernetesResourceSource: the read-only kinds (HTTPRoute, PlanPolicy, AuthPolicy,
 * RateLimitPolicy) read live from the cluster, for `portal.storage: kubernetes`.
 *
 * It shares the store's Kubernetes client (so the same timeout, credentials and error
 * mapping apply) and the same namespace allow-list. Objects come back in the shape
 * ManifestResourceSource gives: apiVersion, kind, metadata without server bookkeeping
 * (managedFields, generation, kubectl's last-applied copy), spec and status; sorted by
 * namespace and name.
 *
 * A kind whose CRD is not installed (the API server answers 404 to the list) lists as
 * empty, with one warning in the log: a cluster without Kuadrant's PlanPolicy simply
 * offers no plans, which is not the user's error.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { isError } from '@backstage/errors';
import type { ObjectRef, ReadOnlyObject } from '@devportal/plugin-portal-common';
import type {
  CustomResourceType,
  KubeObject,
  KubernetesApi,
} from '../store/kubernetes/kubernetesClient';
import { namespaceSegments, pageSegments } from '../store/kubernetes/kubernetesPaging';
import type { Page, PageRequest, ReadOnlyKind, ReadOnlyResourceSource } from '../store/types';
import { READ_ONLY_API_VERSIONS } from './manifestSchema';

const PLURALS: Readonly<Record<ReadOnlyKind, string>> = {
  HTTPRoute: 'httproutes',
  PlanPolicy: 'planpolicies',
  AuthPolicy: 'authpolicies',
  RateLimitPolicy: 'ratelimitpolicies',
};

/** A potentially large copy of the whole object that kubectl apply leaves behind. */
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

function resourceType(kind: ReadOnlyKind): CustomResourceType {
  const [group, version] = READ_ONLY_API_VERSIONS[kind].split('/');
  return { group, version, plural: PLURALS[kind], kind };
}

function timestamp(value: string | Date | undefined): string | undefined {
  return value instanceof Date ? value.toISOString().replace(/\.\d{3}Z$/, 'Z') : value;
}

function toReadOnlyObject(kind: ReadOnlyKind, object: KubeObject): ReadOnlyObject {
  const { metadata } = object;
  const annotations = { ...metadata.annotations };
  delete annotations[LAST_APPLIED_ANNOTATION];
  const creationTimestamp = timestamp(metadata.creationTimestamp);
  return {
    apiVersion: READ_ONLY_API_VERSIONS[kind],
    kind,
    metadata: {
      namespace: metadata.namespace ?? '',
      name: metadata.name ?? '',
      ...(metadata.uid !== undefined && { uid: metadata.uid }),
      ...(metadata.resourceVersion !== undefined && {
        resourceVersion: metadata.resourceVersion,
      }),
      ...(creationTimestamp !== undefined && { creationTimestamp }),
      ...(metadata.labels !== undefined && { labels: metadata.labels }),
      ...(Object.keys(annotations).length > 0 && { annotations }),
    },
    ...(object.spec !== undefined && { spec: object.spec }),
    ...(object.status !== undefined && { status: object.status }),
  };
}

/** Options of {@link KubernetesResourceSource.create}. */
export interface KubernetesResourceSourceOptions {
  /** The client the store uses (see `createKubernetesApi`). */
  api: KubernetesApi;
  /** `portal.kubernetes.namespaces`; undefined = every namespace. */
  namespaces?: string[];
  logger: LoggerService;
}

/** A {@link ReadOnlyResourceSource} over the cluster's Gateway API and Kuadrant objects. */
export class KubernetesResourceSource implements ReadOnlyResourceSource {
  /** Builds the source; no request is made until the first list or get. */
  static create(options: KubernetesResourceSourceOptions): KubernetesResourceSource {
    return new KubernetesResourceSource(options.api, options.namespaces, options.logger);
  }

  private readonly warnedMissing = new Set<ReadOnlyKind>();

  private constructor(
    private readonly api: KubernetesApi,
    private readonly servedNamespaces: string[] | undefined,
    private readonly logger: LoggerService,
  ) {}

  /** The served namespaces, or just `namespace` ([] when it is not served). */
  private namespacesToList(namespace: string | undefined): string[] | undefined {
    if (namespace === undefined) return this.servedNamespaces;
    return this.isServed(namespace) ? [namespace] : [];
  }

  private isServed(namespace: string): boolean {
    return this.servedNamespaces === undefined || this.servedNamespaces.includes(namespace);
  }

  /** Whether a list failed because the kind's CRD is not installed (warned once). */
  private isMissingKind(kind: ReadOnlyKind, error: unknown): boolean {
    if (!isError(error) || error.name !== 'NotFoundError') {
      return false;
    }
    if (!this.warnedMissing.has(kind)) {
      this.warnedMissing.add(kind);
      this.logger.warn(
        `The cluster does not serve ${READ_ONLY_API_VERSIONS[kind]} ${kind} (is its CRD installed?); the portal lists none`,
      );
    }
    return true;
  }

  /** Objects of one kind, optionally in one namespace, ordered by namespace and name. */
  async list(kind: ReadOnlyKind, options?: { namespace?: string }): Promise<ReadOnlyObject[]> {
    const namespace = options?.namespace;
    const namespaces = this.namespacesToList(namespace);
    if (namespaces?.length === 0) {
      return [];
    }
    let objects: KubeObject[];
    try {
      objects = await this.api.listCustom(resourceType(kind), { namespaces });
    } catch (error) {
      if (this.isMissingKind(kind, error)) {
        return [];
      }
      throw error;
    }
    return objects
      .map(o => toReadOnlyObject(kind, o))
      .sort(
        (a, b) =>
          a.metadata.namespace.localeCompare(b.metadata.namespace) ||
          a.metadata.name.localeCompare(b.metadata.name),
      );
  }

  /** One page of {@link KubernetesResourceSource.list}, in the API server's order. */
  async listPage(
    kind: ReadOnlyKind,
    options: { namespace?: string },
    page: PageRequest,
  ): Promise<Page<ReadOnlyObject>> {
    const { namespace } = options;
    const namespaces = this.namespacesToList(namespace);
    try {
      const { items, cursor } = await pageSegments(
        namespaceSegments(namespaces),
        chunk => this.api.listCustomChunk(resourceType(kind), chunk),
        () => true,
        page,
      );
      return { items: items.map(o => toReadOnlyObject(kind, o)), cursor };
    } catch (error) {
      if (this.isMissingKind(kind, error)) {
        return { items: [] };
      }
      throw error;
    }
  }

  /** One object, or undefined when there is none (or its namespace is not served). */
  async get(kind: ReadOnlyKind, ref: ObjectRef): Promise<ReadOnlyObject | undefined> {
    if (!this.isServed(ref.namespace)) {
      return undefined;
    }
    const object = await this.api.getCustom(resourceType(kind), ref.namespace, ref.name);
    return object === undefined ? undefined : toReadOnlyObject(kind, object);
  }
}
