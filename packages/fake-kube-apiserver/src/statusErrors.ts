/**
 * `metav1.Status` failure objects, shaped and worded as kube-apiserver's
 * `k8s.io/apimachinery/pkg/api/errors` constructors produce them, so clients
 * that branch on `reason`/`code` (or show `message`) meet the real thing.
 */
import { KubeStatus, KubeStatusError } from './KubeStatusError';

/** Group + resource, e.g. `{ group: 'devportal.kuadrant.io', resource: 'apikeys' }`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** Group + kind, e.g. `{ group: '', kind: 'Secret' }`. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** `secrets` or `apikeys.devportal.kuadrant.io`, as `schema.GroupResource.String()`. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

function qualifiedKind(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

function status(
  code: number,
  reason: string,
  message: string,
  details?: KubeStatus['details'],
): KubeStatusError {
  const body: KubeStatus = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    // StatusReasonUnknown is "" and omitted from the JSON, as in Go.
    ...(reason !== '' ? { reason } : {}),
    ...(details ? { details } : {}),
    code,
  };
  return new KubeStatusError(body);
}

function resourceDetails(gr: GroupResource, name?: string) {
  return {
    ...(name !== undefined && name !== '' ? { name } : {}),
    ...(gr.group !== '' ? { group: gr.group } : {}),
    kind: gr.resource,
  };
}

/** 404 NotFound: `secrets "x" not found`. */
export function notFound(gr: GroupResource, name: string): KubeStatusError {
  return status(
    404,
    'NotFound',
    `${qualifiedResource(gr)} "${name}" not found`,
    resourceDetails(gr, name),
  );
}

/** 404 for a path the server has no handler for inside a known group/version. */
export function resourceNotServed(): KubeStatusError {
  return status(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** 409 AlreadyExists on create. */
export function alreadyExists(gr: GroupResource, name: string): KubeStatusError {
  return status(
    409,
    'AlreadyExists',
    `${qualifiedResource(gr)} "${name}" already exists`,
    resourceDetails(gr, name),
  );
}

/** The `Conflict` message kube-apiserver uses for a stale resourceVersion. */
export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 409 Conflict: `Operation cannot be fulfilled on … : <why>`. */
export function conflict(gr: GroupResource, name: string, why: string): KubeStatusError {
  return status(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    resourceDetails(gr, name),
  );
}

/** One field error inside a 422 Invalid. */
export interface FieldError {
  type: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden';
  field: string;
  /** The offending value (rendered like Go's `%#v` for strings). */
  value?: unknown;
  detail: string;
}

function renderFieldError(e: FieldError): string {
  switch (e.type) {
    case 'FieldValueRequired':
      return `Required value: ${e.detail}`;
    case 'FieldValueForbidden':
      return `Forbidden: ${e.detail}`;
    default:
      return `Invalid value: ${renderValue(e.value)}: ${e.detail}`;
  }
}

function renderValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === 0) return '0x0';
  return String(value);
}

/** 422 Invalid: `Secret "x" is invalid: metadata.name: Invalid value: …`. */
export function invalid(gk: GroupKind, name: string, errors: FieldError[]): KubeStatusError {
  const rendered = errors.map(e => `${e.field}: ${renderFieldError(e)}`);
  const aggregate = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  return status(422, 'Invalid', `${qualifiedKind(gk)} "${name}" is invalid: ${aggregate}`, {
    ...(name !== '' ? { name } : {}),
    ...(gk.group !== '' ? { group: gk.group } : {}),
    kind: gk.kind,
    causes: errors.map(e => ({
      reason: e.type,
      message: renderFieldError(e),
      field: e.field,
    })),
  });
}

/** 400 BadRequest with the server's message. */
export function badRequest(message: string): KubeStatusError {
  return status(400, 'BadRequest', message);
}

/** 401 as the authentication filter answers it. */
export function unauthorized(): KubeStatusError {
  return status(401, 'Unauthorized', 'Unauthorized');
}

/** 403 as the authorization filter answers it. */
export function forbidden(
  gr: GroupResource,
  name: string | undefined,
  reason: string,
): KubeStatusError {
  const prefix =
    name !== undefined && name !== ''
      ? `${qualifiedResource(gr)} "${name}" is forbidden`
      : `${qualifiedResource(gr)} is forbidden`;
  return status(403, 'Forbidden', `${prefix}: ${reason}`, resourceDetails(gr, name));
}

/** 405 MethodNotAllowed. */
export function methodNotAllowed(): KubeStatusError {
  return status(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

/** 410 Expired for a resourceVersion older than the retained history. */
export function expired(message: string): KubeStatusError {
  return status(410, 'Expired', message);
}

/** 415 for patch types the endpoint does not accept. */
export function unsupportedMediaType(contentType: string, accepted: string[]): KubeStatusError {
  return status(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    { kind: contentType },
  );
}

/** 422 for a JSON patch that cannot be applied (e.g. a failed `test` op). */
export function unprocessablePatch(message: string): KubeStatusError {
  return status(422, 'Invalid', message);
}

/**
 * A plain Go error that reaches the handler unwrapped: 500 with an empty
 * (omitted) reason, e.g. creating an object that carries a resourceVersion.
 */
export function unknownServerError(message: string): KubeStatusError {
  return status(500, '', message);
}

/** 500 InternalError (used by fault injection). */
export function internalError(message: string): KubeStatusError {
  return status(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ reason: '', message }],
  });
}

/** 503 ServiceUnavailable (used by fault injection). */
export function serviceUnavailable(message: string): KubeStatusError {
  return status(503, 'ServiceUnavailable', message, {});
}

/** 429 TooManyRequests as API Priority and Fairness answers it. */
export function tooManyRequests(retryAfterSeconds: number): KubeStatusError {
  return status(429, 'TooManyRequests', 'Too many requests, please try again later.', {
    retryAfterSeconds,
  });
}
