/*
 * The broker's verdict on each resource it reads from Kubernetes (an MCPServerRegistration, an
 * MCPVirtualServer), written where the resource's owners look: the `Accepted` condition in
 * `status.conditions` (True when it serves, False with the refusal's reason and message). Written only when it differs from what the object carries, as
 * a JSON merge patch of the status subresource that keeps other writers' conditions (Kuadrant's
 * controller writes its own) and carries the object's resourceVersion: a concurrent change
 * answers 409, and the watch event of that change brings the object back here for another try.
 * `lastTransitionTime` moves only when the status flips.
 *
 * Failure modes: where the cluster does not allow the write (403: the broker's role lacks
 * `patch` on `<plural>/status`) this is logged once and the refusal stays visible
 * in the log and on `/status`; the same verdict is not retried for the same object version. A
 * resource deleted meanwhile (404) needs nothing; so does a CRD without a status subresource
 * (Kuadrant's MCPVirtualServer), which answers 404 as well. Nothing here ever blocks discovery.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  describeKubernetesFailure,
  kubernetesApiStatusOf,
  mergePatchOptions,
} from '@devportal/backend-kubernetes-client';
import type * as k8s from '@kubernetes/client-node';
import type { KubeObjectLike } from './registrationTypes';

/** The condition type the broker owns. */
export const ACCEPTED_CONDITION = 'Accepted';

/** What the broker decided about a resource; `Reason` is the kind's refusal vocabulary. */
export type AcceptedVerdict<Reason extends string = string> =
  | { readonly accepted: true; readonly message: string }
  | { readonly accepted: false; readonly reason: Reason; readonly message: string };

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** Options of {@link AcceptedConditions}. */
export interface AcceptedConditionsOptions {
  custom: k8s.CustomObjectsApi;
  lib: typeof k8s;
  /** The resource type whose objects' status it writes (`kind` names it in log lines). */
  resource: { group: string; version: string; plural: string; kind: string };
  requestTimeoutMs: number;
  logger: LoggerService;
  now?: () => Date;
}

/** Writes the `Accepted` condition of one resource type's objects; see the file comment. */
export class AcceptedConditions {
  /** Per object key, the last write tried (verdict and object version). */
  private readonly attempted = new Map<string, string>();
  private forbiddenLogged = false;

  constructor(private readonly options: AcceptedConditionsOptions) {}

  /** Writes `verdict` onto `object` unless it already says so (fire and forget). */
  sync(object: KubeObjectLike, verdict: AcceptedVerdict): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const key = `${namespace}/${name}`;
    const conditions: Condition[] = Array.isArray(object.status?.conditions)
      ? object.status.conditions
      : [];
    const current = conditions.find(c => c?.type === ACCEPTED_CONDITION);
    const generation = object.metadata?.generation;
    const wanted = {
      status: verdict.accepted ? ('True' as const) : ('False' as const),
      reason: verdict.accepted ? 'Accepted' : verdict.reason,
      message: verdict.message,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    };
    if (
      current !== undefined &&
      current.status === wanted.status &&
      current.reason === wanted.reason &&
      current.message === wanted.message &&
      current.observedGeneration === wanted.observedGeneration
    ) {
      return;
    }
    const attempt = JSON.stringify([object.metadata?.resourceVersion, wanted]);
    if (this.attempted.get(key) === attempt) return;
    this.attempted.set(key, attempt);
    const condition: Condition = {
      type: ACCEPTED_CONDITION,
      ...wanted,
      lastTransitionTime:
        current !== undefined && current.status === wanted.status
          ? current.lastTransitionTime
          : (this.options.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    void this.write(namespace, name, object.metadata?.resourceVersion, [
      ...conditions.filter(c => c?.type !== ACCEPTED_CONDITION),
      condition,
    ]);
  }

  /** Forgets a deleted object (`<namespace>/<name>`). */
  forget(key: string): void {
    this.attempted.delete(key);
  }

  private async write(
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
    conditions: Condition[],
  ): Promise<void> {
    const { custom, lib, resource, requestTimeoutMs, logger } = this.options;
    try {
      await custom.patchNamespacedCustomObjectStatus(
        {
          group: resource.group,
          version: resource.version,
          plural: resource.plural,
          namespace,
          name,
          body: {
            metadata: resourceVersion === undefined ? {} : { resourceVersion },
            status: { conditions },
          },
        },
        mergePatchOptions(lib, requestTimeoutMs),
      );
    } catch (error) {
      const code = kubernetesApiStatusOf(error)?.code;
      // 409: changed meanwhile (its watch event brings it back); 404: deleted meanwhile.
      if (code === 409 || code === 404) return;
      if (code === 403) {
        if (this.forbiddenLogged) return;
        this.forbiddenLogged = true;
        logger.warn(
          `Cannot write the Accepted condition of ${resource.kind} resources (403 Forbidden): grant the broker "patch" on ${resource.plural}/status (deploy/mcp-broker-rbac.yaml). Refusals stay visible in this log and on /api/mcp-broker/status.`,
        );
        return;
      }
      // Tried again at the next resolution (a resync at the latest).
      this.attempted.delete(`${namespace}/${name}`);
      logger.warn(
        `Could not write the Accepted condition of ${resource.kind} ${namespace}/${name}: ${describeKubernetesFailure(error)}`,
      );
    }
  }
}
