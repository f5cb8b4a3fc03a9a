/*
 * Entity refs in the broker's config (rate-limit subjects, server owners): normalised the way
 * Backstage compares them (lower case, kind and namespace filled in), so that a config entry
 * and a person's ownership claims compare as strings.
 */

/** `kind:namespace/name`, `kind:name`, `namespace/name` or `name`. */
const ENTITY_REF = /^(?:([a-z0-9-]+):)?(?:([^:/\s]+)\/)?([^:/\s]+)$/i;

/**
 * The entity ref `value` names, as `kind:namespace/name` in lower case (Backstage compares refs
 * without case), with `defaultKind` and the `default` namespace filled in; undefined when it is
 * not one or its kind is another.
 */
export function normalizeEntityRef(value: string, defaultKind: string): string | undefined {
  const match = ENTITY_REF.exec(value.trim());
  if (!match) return undefined;
  const [, kind = defaultKind, namespace = 'default', name] = match;
  if (kind.toLowerCase() !== defaultKind) return undefined;
  return `${defaultKind}:${namespace}/${name}`.toLowerCase();
}

/**
 * A server owner (contract mcp-access §2.4): a group or user entity ref, the kind defaulting to
 * `group`; undefined when `value` is neither.
 */
export function normalizeOwnerRef(value: string): string | undefined {
  return normalizeEntityRef(value, 'group') ?? normalizeEntityRef(value, 'user');
}
