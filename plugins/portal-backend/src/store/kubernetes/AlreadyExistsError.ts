import { ConflictError } from '@backstage/errors';

/** A 409 with reason AlreadyExists: the name is taken (not a stale resourceVersion). */
export class AlreadyExistsError extends ConflictError {}
