/*
 * Parameter schemas of the broker's permission rules as Standard (JSON) Schemas. Written by
 * hand from a JSON Schema and a validator because the permission framework's types expect
 * zod 4 (or its own zod/v3 copy, deprecated), while this package uses zod 3: a structural
 * schema avoids mixing the two. The JSON Schema is what the RBAC UI shows admins.
 */
import type { JsonObject } from '@backstage/types';

/**
 * A Standard Schema (with JSON Schema) for rule params: `validate` answers the problem in
 * words when `value` does not fit, so a misconfigured policy fails with a readable message.
 */
export function ruleParamsSchema<T>(
  jsonSchema: JsonObject,
  problemOf: (value: unknown) => string | undefined,
) {
  return {
    '~standard': {
      version: 1,
      vendor: 'devportal',
      validate(value: unknown) {
        const problem = problemOf(value);
        return problem === undefined ? { value: value as T } : { issues: [{ message: problem }] };
      },
      jsonSchema: {
        input: () => jsonSchema,
        output: () => jsonSchema,
      },
    },
  } as const;
}

/** A problem when `value` is not an object with exactly `keys`, else undefined. */
export function objectProblem(value: unknown, keys: readonly string[]): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'expected an object';
  const extra = Object.keys(value).filter(key => !keys.includes(key));
  if (extra.length > 0) return `unexpected parameter ${extra.map(key => `"${key}"`).join(', ')}`;
  const missing = keys.filter(key => !(key in value));
  if (missing.length > 0) return `missing parameter ${missing.map(key => `"${key}"`).join(', ')}`;
  return undefined;
}

/** True when `value` is an array of strings. */
export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(item => typeof item === 'string');
}
