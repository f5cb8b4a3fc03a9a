/**
 * The error a fake server's handlers throw to answer with a Kubernetes
 * Status (statusErrors.ts builds the ones kube-apiserver sends).
 */

/** A cause inside `details.causes` of an `Invalid` status. */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

/** The JSON body of a `kind: Status` failure. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code: number;
}

/** An error carrying the Status the HTTP layer answers with. */
export class KubeStatusError extends Error {
  readonly status: KubeStatus;

  constructor(kubeStatus: KubeStatus) {
    super(kubeStatus.message);
    this.status = kubeStatus;
    this.name = 'KubeStatusError';
  }
}
