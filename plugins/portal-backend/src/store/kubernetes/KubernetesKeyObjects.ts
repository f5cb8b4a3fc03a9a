/*
 * The APIKey objects of the Kubernetes store, below both the key requests and the
 * products' cascade delete: reading a key in a served namespace, listing a product's
 * keys, and deleting a key with its Secrets.
 *
 * Keys carry an ownerReference to their product and Secrets one to their key, so a
 * cluster's garbage collector also cleans up after deletes done with kubectl. The store
 * does not rely on it: it deletes Secrets itself (revocation must be now).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { ObjectRef } from '@devportal/plugin-portal-common';
import { API_KEYS } from './customResources';
import { isNotFound } from './errorChecks';
import { keyNotFound } from './keyCompareAndSet';
import type { KubeObject, KubernetesApi } from './kubernetesClient';
import { KEY_UID_LABEL, PRODUCT_LABEL, productLabelValue } from './labels';
import type { ServedNamespaces } from './ServedNamespaces';

/** Reads and deletes APIKey objects (with their Secrets) in the served namespaces. */
export class KubernetesKeyObjects {
  constructor(
    private readonly api: KubernetesApi,
    private readonly namespaces: ServedNamespaces,
    private readonly logger: LoggerService,
  ) {}

  /** The APIKey object; undefined when it does not exist or its namespace is not served. */
  async read(ref: ObjectRef): Promise<KubeObject | undefined> {
    return this.namespaces.getCustom(this.api, API_KEYS, ref);
  }

  /** The APIKey object; NotFoundError when it does not exist or its namespace is not served. */
  async require(ref: ObjectRef): Promise<KubeObject> {
    const object = await this.read(ref);
    if (object === undefined) throw keyNotFound(ref);
    return object;
  }

  /** The keys of a product (by product label, re-checked against the exact name). */
  async ofProduct(ref: ObjectRef): Promise<KubeObject[]> {
    const keys = await this.api.listCustom(API_KEYS, {
      namespaces: [ref.namespace],
      labelSelector: `${PRODUCT_LABEL}=${productLabelValue(ref.name)}`,
    });
    return keys.filter(k => k.spec?.apiProductRef?.name === ref.name);
  }

  /**
   * Deletes a key (this very object: uid precondition), then its Secrets, which revokes
   * it at once rather than whenever the garbage collector gets to them. A key already
   * gone is fine here (a retried cascade); its Secrets are still removed.
   */
  async delete(key: KubeObject): Promise<void> {
    const namespace = key.metadata.namespace!;
    try {
      await this.api.deleteCustom(API_KEYS, namespace, key.metadata.name!, {
        uid: key.metadata.uid,
      });
    } catch (error) {
      if (!isNotFound(error)) {
        throw error;
      }
    }
    await this.api.deleteSecrets(namespace, `${KEY_UID_LABEL}=${key.metadata.uid}`);
  }

  /** Best-effort removal of a key this call created and could not finish. */
  async discard(key: KubeObject): Promise<void> {
    try {
      await this.delete(key);
    } catch (error) {
      // The key stays, status-less (it reads as Pending); nothing secret is in it.
      this.logger.warn(
        `Could not remove the unfinished API key ${key.metadata.namespace}/${key.metadata.name}: ${
          (error as Error).message
        }`,
      );
    }
  }
}
