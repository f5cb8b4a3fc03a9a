/*
 * The narrow Kubernetes API the portal uses, over `@kubernetes/client-node`.
 *
 * - The client is built from config when the plugin starts (`createKubernetesApi`),
 *   never at import time: client-node 1.x (an ES module) is loaded here only when the
 *   Kubernetes store is chosen.
 * - Every call has its own timeout and merge patches send `application/merge-patch+json`
 *   (client-node 1.4 quirks handled in @devportal/backend-kubernetes-client, which also loads
 *   the kubeconfig the way the broker does).
 * - Every failure passes `mapKubernetesError` here, and only here.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { NotFoundError } from '@backstage/errors';
import {
  loadKubernetesClient,
  mergePatchOptions,
  requestTimeoutOptions,
} from '@devportal/backend-kubernetes-client';
import type * as k8s from '@kubernetes/client-node';
import { KUBERNETES_CONFIG_PATH, type KubernetesStoreConfig } from './kubernetesConfig';
import { mapKubernetesError, type KubernetesCallDescription } from './kubernetesErrors';

/** A Kubernetes object as the API server returns it (the parts the portal reads). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    namespace?: string;
    name?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }>;
    [key: string]: unknown;
  };
  spec?: any;
  status?: any;
  data?: Record<string, string>;
  [key: string]: unknown;
}

/** Where a custom resource lives on the API server. */
export interface CustomResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

/** Preconditions of a delete: it happens only to this exact object. */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/**
 * Which namespaces a list covers: `undefined` = all (one cluster-wide request),
 * otherwise one request per namespace.
 */
export type NamespaceScope = string[] | undefined;

/** Options of {@link KubernetesApi.listCustomChunk}. */
export interface ListChunkOptions {
  namespace?: string;
  labelSelector?: string;
  /** The most items the API server returns. */
  limit: number;
  /** The API server's continue token of the previous chunk. */
  continue?: string;
}

/** One chunk of a list. */
export interface ListChunk {
  items: KubeObject[];
  continue?: string;
}

/** The Kubernetes calls of the portal; every failure is an `@backstage/errors` error. */
export interface KubernetesApi {
  /** Per-request timeout in milliseconds. */
  readonly requestTimeoutMs: number;
  /** The object, or undefined when the API server answers 404. */
  getCustom(
    type: CustomResourceType,
    namespace: string,
    name: string,
  ): Promise<KubeObject | undefined>;
  listCustom(
    type: CustomResourceType,
    options: { namespaces: NamespaceScope; labelSelector?: string },
  ): Promise<KubeObject[]>;
  /**
   * One chunk of a list in the API server's order (namespace, name): `namespace`
   * undefined = cluster-wide. `continue` is present when the server has more.
   */
  listCustomChunk(type: CustomResourceType, options: ListChunkOptions): Promise<ListChunk>;
  createCustom(type: CustomResourceType, namespace: string, body: KubeObject): Promise<KubeObject>;
  /** PUT; `body.metadata.resourceVersion` is the compare-and-set precondition. */
  replaceCustom(
    type: CustomResourceType,
    namespace: string,
    name: string,
    body: KubeObject,
  ): Promise<KubeObject>;
  /** JSON merge patch of the main resource (a `metadata.resourceVersion` in it is a precondition). */
  mergePatchCustom(
    type: CustomResourceType,
    namespace: string,
    name: string,
    patch: object,
  ): Promise<KubeObject>;
  /** JSON merge patch of the status subresource (same precondition rule). */
  mergePatchCustomStatus(
    type: CustomResourceType,
    namespace: string,
    name: string,
    patch: object,
  ): Promise<KubeObject>;
  deleteCustom(
    type: CustomResourceType,
    namespace: string,
    name: string,
    preconditions?: DeletePreconditions,
  ): Promise<void>;

  createSecret(namespace: string, body: KubeObject): Promise<KubeObject>;
  /** The Secret, or undefined on 404. */
  readSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  deleteSecret(namespace: string, name: string): Promise<void>;
  /** Deletes every Secret of the namespace matching the selector (never without one). */
  deleteSecrets(namespace: string, labelSelector: string): Promise<void>;

  createConfigMap(namespace: string, body: KubeObject): Promise<KubeObject>;
  /** The ConfigMap, or undefined on 404. */
  readConfigMap(namespace: string, name: string): Promise<KubeObject | undefined>;
  deleteConfigMap(
    namespace: string,
    name: string,
    preconditions?: DeletePreconditions,
  ): Promise<void>;
}

/** Options of {@link createKubernetesApi}. */
export interface CreateKubernetesApiOptions {
  config: KubernetesStoreConfig;
  logger: LoggerService;
}

class ClientNodeKubernetesApi implements KubernetesApi {
  constructor(
    private readonly lib: typeof k8s,
    private readonly custom: k8s.CustomObjectsApi,
    private readonly core: k8s.CoreV1Api,
    private readonly logger: LoggerService,
    readonly requestTimeoutMs: number,
  ) {}

  /** Per-call options: a fresh timeout signal for this one request. */
  private timeout() {
    return requestTimeoutOptions(this.lib, this.requestTimeoutMs);
  }

  private mergePatchOptions() {
    return mergePatchOptions(this.lib, this.requestTimeoutMs);
  }

  private async call<T>(description: KubernetesCallDescription, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw mapKubernetesError(error, description, this.logger, this.requestTimeoutMs);
    }
  }

  /** Like `call`, but a 404 gives undefined. */
  private async read<T>(
    description: KubernetesCallDescription,
    run: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await this.call(description, run);
    } catch (error) {
      if (error instanceof NotFoundError) {
        return undefined;
      }
      throw error;
    }
  }

  getCustom(type: CustomResourceType, namespace: string, name: string) {
    return this.read({ verb: 'get', resource: type.plural, namespace, name }, () =>
      this.custom.getNamespacedCustomObject(
        { ...coordinates(type), namespace, name },
        this.timeout(),
      ),
    ) as Promise<KubeObject | undefined>;
  }

  async listCustom(
    type: CustomResourceType,
    options: { namespaces: NamespaceScope; labelSelector?: string },
  ) {
    const { labelSelector } = options;
    if (options.namespaces === undefined) {
      const list = await this.call({ verb: 'list', resource: type.plural }, () =>
        this.custom.listClusterCustomObject(
          { ...coordinates(type), labelSelector },
          this.timeout(),
        ),
      );
      return (list as { items: KubeObject[] }).items;
    }
    const lists = await Promise.all(
      options.namespaces.map(namespace =>
        this.call({ verb: 'list', resource: type.plural, namespace }, () =>
          this.custom.listNamespacedCustomObject(
            { ...coordinates(type), namespace, labelSelector },
            this.timeout(),
          ),
        ),
      ),
    );
    return lists.flatMap(list => (list as { items: KubeObject[] }).items);
  }

  async listCustomChunk(type: CustomResourceType, options: ListChunkOptions): Promise<ListChunk> {
    const { namespace, labelSelector, limit } = options;
    const query = { ...coordinates(type), labelSelector, limit, _continue: options.continue };
    const list = (await this.call({ verb: 'list', resource: type.plural, namespace }, () =>
      namespace === undefined
        ? this.custom.listClusterCustomObject(query, this.timeout())
        : this.custom.listNamespacedCustomObject({ ...query, namespace }, this.timeout()),
    )) as { items: KubeObject[]; metadata?: { continue?: string } };
    // The API server sends `continue: ""` on the last chunk.
    const next = list.metadata?.continue;
    return { items: list.items, continue: next === undefined || next === '' ? undefined : next };
  }

  createCustom(type: CustomResourceType, namespace: string, body: KubeObject) {
    return this.call(
      { verb: 'create', resource: type.plural, namespace, name: body.metadata.name },
      () =>
        this.custom.createNamespacedCustomObject(
          { ...coordinates(type), namespace, body },
          this.timeout(),
        ),
    ) as Promise<KubeObject>;
  }

  replaceCustom(type: CustomResourceType, namespace: string, name: string, body: KubeObject) {
    return this.call({ verb: 'update', resource: type.plural, namespace, name }, () =>
      this.custom.replaceNamespacedCustomObject(
        { ...coordinates(type), namespace, name, body },
        this.timeout(),
      ),
    ) as Promise<KubeObject>;
  }

  mergePatchCustom(type: CustomResourceType, namespace: string, name: string, patch: object) {
    return this.call({ verb: 'patch', resource: type.plural, namespace, name }, () =>
      this.custom.patchNamespacedCustomObject(
        { ...coordinates(type), namespace, name, body: patch },
        this.mergePatchOptions(),
      ),
    ) as Promise<KubeObject>;
  }

  mergePatchCustomStatus(type: CustomResourceType, namespace: string, name: string, patch: object) {
    return this.call({ verb: 'patch', resource: `${type.plural}/status`, namespace, name }, () =>
      this.custom.patchNamespacedCustomObjectStatus(
        { ...coordinates(type), namespace, name, body: patch },
        this.mergePatchOptions(),
      ),
    ) as Promise<KubeObject>;
  }

  async deleteCustom(
    type: CustomResourceType,
    namespace: string,
    name: string,
    preconditions?: DeletePreconditions,
  ) {
    await this.call({ verb: 'delete', resource: type.plural, namespace, name }, () =>
      this.custom.deleteNamespacedCustomObject(
        { ...coordinates(type), namespace, name, body: preconditions && { preconditions } },
        this.timeout(),
      ),
    );
  }

  createSecret(namespace: string, body: KubeObject) {
    return this.call(
      { verb: 'create', resource: 'secrets', namespace, name: body.metadata.name },
      () =>
        this.core.createNamespacedSecret({ namespace, body: body as k8s.V1Secret }, this.timeout()),
    ) as Promise<KubeObject>;
  }

  readSecret(namespace: string, name: string) {
    return this.read({ verb: 'get', resource: 'secrets', namespace, name }, () =>
      this.core.readNamespacedSecret({ namespace, name }, this.timeout()),
    ) as Promise<KubeObject | undefined>;
  }

  async deleteSecret(namespace: string, name: string) {
    await this.call({ verb: 'delete', resource: 'secrets', namespace, name }, () =>
      this.core.deleteNamespacedSecret({ namespace, name }, this.timeout()),
    );
  }

  async deleteSecrets(namespace: string, labelSelector: string) {
    if (labelSelector.trim() === '') {
      // An empty selector would delete every Secret of the namespace.
      throw new Error('deleteSecrets needs a label selector');
    }
    await this.call({ verb: 'deletecollection', resource: 'secrets', namespace }, () =>
      this.core.deleteCollectionNamespacedSecret({ namespace, labelSelector }, this.timeout()),
    );
  }

  createConfigMap(namespace: string, body: KubeObject) {
    return this.call(
      { verb: 'create', resource: 'configmaps', namespace, name: body.metadata.name },
      () =>
        this.core.createNamespacedConfigMap(
          { namespace, body: body as k8s.V1ConfigMap },
          this.timeout(),
        ),
    ) as Promise<KubeObject>;
  }

  readConfigMap(namespace: string, name: string) {
    return this.read({ verb: 'get', resource: 'configmaps', namespace, name }, () =>
      this.core.readNamespacedConfigMap({ namespace, name }, this.timeout()),
    ) as Promise<KubeObject | undefined>;
  }

  async deleteConfigMap(namespace: string, name: string, preconditions?: DeletePreconditions) {
    await this.call({ verb: 'delete', resource: 'configmaps', namespace, name }, () =>
      this.core.deleteNamespacedConfigMap(
        { namespace, name, body: preconditions && { preconditions } },
        this.timeout(),
      ),
    );
  }
}

/**
 * Builds the portal's Kubernetes API from config (reads the kubeconfig or the pod's
 * service account now, so a wrong path or context fails plugin start with a clear
 * message). No request is made here.
 */
export async function createKubernetesApi(
  options: CreateKubernetesApiOptions,
): Promise<KubernetesApi> {
  // client-node (ESM-only) is loaded here, only when the Kubernetes store is chosen.
  const { lib, kubeConfig: kc } = loadKubernetesClient(
    options.config.source,
    KUBERNETES_CONFIG_PATH,
  );
  return new ClientNodeKubernetesApi(
    lib,
    kc.makeApiClient(lib.CustomObjectsApi),
    kc.makeApiClient(lib.CoreV1Api),
    options.logger,
    options.config.requestTimeoutMs,
  );
}

function coordinates(type: CustomResourceType) {
  return { group: type.group, version: type.version, plural: type.plural };
}
