/*
 * Classification of a failed client-node call, shared by every plugin's own error mapping (each
 * plugin decides what a class means for its callers; this file only tells the classes apart):
 *
 * - an answer of the API server: {@link kubernetesApiStatusOf} gives its HTTP status and the
 *   Kubernetes Status's reason and message (client-node hands the body over as a JSON string,
 *   `undefined` for a 401, plain text for an unknown API group);
 * - no answer (timeout, refused or broken connection, DNS, TLS): {@link isTimeoutOrNetworkError},
 *   which follows `cause` chains (the fetch client wraps the socket error);
 * - for logs, {@link describeKubernetesFailure}: status and reason only, never a response body,
 *   so a Secret's data can never reach a log line.
 */
import { isError } from '@backstage/errors';

/**
 * Node's error codes of a connection that failed or broke: a backing service (a database, the
 * Kubernetes API server) is unreachable right now, not wrong.
 *
 * @public
 */
export const NODE_NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);

/** Node's codes plus the fetch client's socket error and TLS failures to reach the API server. */
const KUBERNETES_NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  ...NODE_NETWORK_ERROR_CODES,
  'UND_ERR_SOCKET',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
]);

/**
 * The API server's answer to a failed call.
 *
 * @public
 */
export interface KubernetesApiStatus {
  /** The HTTP status. */
  code: number;
  /** The Status's `reason`, e.g. `AlreadyExists`, `Expired`. */
  reason?: string;
  /** The Status's `message` (or the plain-text body). */
  message?: string;
}

/**
 * The HTTP status and Kubernetes Status of a client-node `ApiException`, or undefined when the
 * error is not an answer of the API server.
 *
 * @public
 */
export function kubernetesApiStatusOf(error: unknown): KubernetesApiStatus | undefined {
  if (!isError(error)) {
    return undefined;
  }
  const { code, body } = error as { code?: unknown; body?: unknown };
  if (typeof code !== 'number' || code < 100 || code > 599) {
    return undefined;
  }
  let status: { reason?: unknown; message?: unknown } | undefined;
  if (typeof body === 'string') {
    try {
      status = JSON.parse(body);
    } catch {
      status = { message: body.trim() };
    }
  } else if (typeof body === 'object' && body !== null) {
    status = body as typeof status;
  }
  return {
    code,
    reason: typeof status?.reason === 'string' ? status.reason : undefined,
    message: typeof status?.message === 'string' ? status.message : undefined,
  };
}

/**
 * Whether the call got no answer: it timed out or aborted, or the connection failed (network and
 * TLS codes, anywhere in the `cause` chain).
 *
 * @public
 */
export function isTimeoutOrNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; isError(e) && depth < 5; depth++) {
    const { name, code, type } = e as { name: string; code?: unknown; type?: unknown };
    if (
      name === 'AbortError' ||
      name === 'TimeoutError' ||
      name === 'FetchError' ||
      type === 'aborted' ||
      (typeof code === 'string' && KUBERNETES_NETWORK_ERROR_CODES.has(code))
    ) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A failed call for a log line: `HTTP 403 Forbidden` for an answer of the API server (status and
 * reason, never the body), the error's message otherwise.
 *
 * @public
 */
export function describeKubernetesFailure(error: unknown): string {
  const status = kubernetesApiStatusOf(error);
  if (status !== undefined) {
    return `HTTP ${status.code}${status.reason === undefined ? '' : ` ${status.reason}`}`;
  }
  return (error as { message?: string } | undefined)?.message ?? String(error);
}
