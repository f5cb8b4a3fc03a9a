/*
 * Which `@backstage/errors` a failed Kubernetes call became (kubernetesErrors.ts maps
 * every call's failure once); the stores branch on these names, never on status codes.
 */
import { isError } from '@backstage/errors';

function isNamed(name: string) {
  return (error: unknown) => isError(error) && error.name === name;
}

/** Whether a call failed with a ConflictError (a 409: stale resourceVersion, taken name). */
export const isConflict = isNamed('ConflictError');

/** Whether a call failed with a NotFoundError (a 404). */
export const isNotFound = isNamed('NotFoundError');
