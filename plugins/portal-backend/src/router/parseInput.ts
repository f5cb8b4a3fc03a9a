/*
 * Request validation at the edge (spec §1, §4), with the schemas of the contract
 * (`portalOperations` in @devportal/plugin-portal-common): every body schema is `.strict()`,
 * so an unknown field or one the server owns (status, uid, resourceVersion, requestedBy, ...)
 * is a 400 whose message names the field.
 */
import { InputError } from '@backstage/errors';
import { z } from 'zod';

/** Fields only the server sets; named as such in error messages. */
const SERVER_OWNED_FIELDS = new Set([
  'status',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generateName',
  'managedFields',
  'requestedBy',
  'generation',
  'deletionTimestamp',
]);

function describeIssue(issue: z.ZodIssue): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === z.ZodIssueCode.unrecognized_keys) {
    return issue.keys
      .map(key => {
        const field = path ? `${path}.${key}` : key;
        return SERVER_OWNED_FIELDS.has(key)
          ? `${field} is set by the server and cannot be sent`
          : `${field} is not a known field`;
      })
      .join('; ');
  }
  return `${path || 'body'}: ${issue.message}`;
}

/**
 * Parses `input` with `schema`, or throws an InputError that names every offending field,
 * e.g. `invalid request body: spec.displayName: Required; status is set by the server`.
 */
export function parseInput<T extends z.ZodTypeAny>(
  schema: T,
  input: unknown,
  what: string,
): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new InputError(`invalid ${what}: ${result.error.issues.map(describeIssue).join('; ')}`);
  }
  return result.data;
}
