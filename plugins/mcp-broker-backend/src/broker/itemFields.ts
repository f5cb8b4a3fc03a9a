/*
 * Reading members of list items as backends sent them (untyped JSON): a member of the wrong type
 * reads as absent, so a malformed item can shape no answer of the broker.
 */

/** `value` when it is a string, else undefined. */
export const textField = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** `value` when it is a JSON object (not an array), else undefined. */
export const recordField = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
