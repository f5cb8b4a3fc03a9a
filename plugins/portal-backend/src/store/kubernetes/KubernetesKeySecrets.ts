/*
 * The Secrets that hold approved API keys in the Kubernetes store: created on approval,
 * read once by the reveal, removed with their key (KubernetesKeyObjects.delete).
 *
 * - An approval creates the key's Secret first and then flips the status (pointing it at
 *   the Secret); a loser deletes its unused Secret. So an Approved key always has its
 *   Secret, and the stored secret is the winner's.
 * - The reveal reads the Secret before its compare-and-set, so a failed read leaves the
 *   key unrevealed instead of burning the secret; the value is returned only by the
 *   caller whose write landed. Of 50 concurrent reveals exactly one write lands.
 *
 * Nothing here logs a secret.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { ConflictError, NotFoundError } from '@backstage/errors';
import type { ObjectRef } from '@devportal/plugin-portal-common';
import { refText } from '../productOwner';
import type { KeyApproval } from '../types';
import {
  API_KEYS,
  API_KEY_SECRET_FIELD,
  nowTimestamp,
  ownerReferenceTo,
  phaseOf,
  type StoredKeyStatus,
} from './customResources';
import { isNotFound } from './errorChecks';
import { MAX_CAS_ATTEMPTS, keyKeptChanging, rethrowUnlessLostRace } from './keyCompareAndSet';
import type { KubeObject, KubernetesApi } from './kubernetesClient';
import type { KubernetesKeyObjects } from './KubernetesKeyObjects';
import {
  KEY_UID_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  PRODUCT_LABEL,
  productLabelValue,
  withoutReservedKeys,
} from './labels';

/** Secret annotations Kuadrant's PlanPolicy and audit tooling read. */
const PLAN_ID_ANNOTATION = 'secret.kuadrant.io/plan-id';
const USER_ID_ANNOTATION = 'secret.kuadrant.io/user-id';

/** Creates, reveals once and discards the Secrets of approved API keys. */
export class KubernetesKeySecrets {
  constructor(
    private readonly api: KubernetesApi,
    private readonly keys: KubernetesKeyObjects,
    private readonly logger: LoggerService,
  ) {}

  /**
   * Creates the immutable Secret of an approved key and returns its generated name: the
   * approval's `secretLabels` (what the gateway selects key Secrets by) plus the store's
   * own labels, which win, so an AuthPolicy cannot take over the store's bookkeeping
   * labels.
   */
  async create(
    key: KubeObject,
    { secret, secretLabels }: KeyApproval & { secret: string },
  ): Promise<string> {
    const created = await this.api.createSecret(key.metadata.namespace!, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        generateName: `${key.metadata.name}-`,
        namespace: key.metadata.namespace,
        labels: {
          ...withoutReservedKeys(secretLabels),
          [MANAGED_BY_LABEL]: MANAGED_BY,
          [KEY_UID_LABEL]: key.metadata.uid!,
          [PRODUCT_LABEL]: productLabelValue(key.spec.apiProductRef.name),
        },
        annotations: {
          [PLAN_ID_ANNOTATION]: key.spec.planTier,
          [USER_ID_ANNOTATION]: key.spec.requestedBy.userId,
        },
        ownerReferences: [{ ...ownerReferenceTo(key, 'APIKey'), controller: true }],
      },
      type: 'Opaque',
      immutable: true,
      data: { [API_KEY_SECRET_FIELD]: Buffer.from(secret, 'utf8').toString('base64') },
    });
    return created.metadata.name!;
  }

  /** Best-effort removal of a Secret that lost its race (it is owned by its key anyway). */
  async discard(namespace: string, name: string): Promise<void> {
    try {
      await this.api.deleteSecret(namespace, name);
    } catch (error) {
      if (!isNotFound(error)) {
        this.logger.warn(
          `Could not remove the unused API key Secret ${namespace}/${name}: ${(error as Error).message}`,
        );
      }
    }
  }

  /** `PortalStore.revealSecret`: a compare-and-set on the key's status, then the Secret's value. */
  async revealSecret(ref: ObjectRef): Promise<string> {
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.keys.require(ref);
      const phase = phaseOf(current);
      if (phase !== 'Approved') {
        throw new ConflictError(
          `API key ${refText(ref)} is ${phase}, not Approved: it has no secret`,
        );
      }
      const status = current.status as StoredKeyStatus;
      if (status.secretRevealed === true) {
        throw new ConflictError(`The secret of API key ${refText(ref)} was already revealed`);
      }
      const secret =
        status.secretRef === undefined
          ? undefined
          : await this.api.readSecret(ref.namespace, status.secretRef.name);
      const encoded = secret?.data?.[API_KEY_SECRET_FIELD];
      if (
        encoded === undefined ||
        secret?.metadata.labels?.[KEY_UID_LABEL] !== current.metadata.uid
      ) {
        throw new NotFoundError(`The secret of API key ${refText(ref)} is missing`);
      }
      try {
        await this.api.mergePatchCustomStatus(API_KEYS, ref.namespace, ref.name, {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          status: { secretRevealed: true, secretRevealedAt: nowTimestamp() },
        });
        return Buffer.from(encoded, 'base64').toString('utf8');
      } catch (error) {
        rethrowUnlessLostRace(ref, error);
      }
    }
    throw keyKeptChanging(ref);
  }
}
