/*
 * The labels and annotations the Kubernetes store writes for itself. Label selectors
 * are how the store filters by owner, requester and product without listing
 * everything, but label values are limited to 63 characters of [A-Za-z0-9._-], so
 * an entity ref such as `user:default/alice` cannot be a label value: it is encoded
 * as a hash, and the exact ref stays in the object (the owner annotation, or
 * `spec.requestedBy.userId`), where the store checks it again after selecting.
 */
import { createHash } from 'node:crypto';
import { InputError } from '@backstage/errors';

/** Prefix of every label and annotation the store owns; callers may not set these. */
export const RESERVED_PREFIX = 'portal.backstage.io/';

/** On products: the encoded owner entity ref (`backstage.io/owner`). */
export const OWNER_LABEL = `${RESERVED_PREFIX}owner`;
/** On keys: the encoded requester entity ref (`spec.requestedBy.userId`). */
export const REQUESTER_LABEL = `${RESERVED_PREFIX}requester`;
/** On keys: the product's name, encoded when it is not a valid label value. */
export const PRODUCT_LABEL = `${RESERVED_PREFIX}product`;
/**
 * On products of an MCP server or endpoint and on their keys (access requests): the target,
 * {@link mcpTargetLabelValue} (contract mcp-access §3.5). Absent on HTTPRoute products and keys.
 */
export const MCP_TARGET_LABEL = `${RESERVED_PREFIX}mcp-target`;
/** On key Secrets and claims: the uid of the APIKey they belong to. */
export const KEY_UID_LABEL = `${RESERVED_PREFIX}apikey-uid`;
/** On claim ConfigMaps, so an operator can find them: always `pending-apikey`. */
export const CLAIM_LABEL = `${RESERVED_PREFIX}claim`;
/** On the Secrets and claims the store creates (not on products and keys, whose labels are the caller's). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY = 'backstage-portal';
/**
 * On keys: when the expiry task claimed the key's expiry announcement (RFC 3339), set by a
 * compare-and-set on resourceVersion so only one claimer wins (contract mcp-access §3.5).
 */
export const EXPIRY_ANNOUNCED_ANNOTATION = `${RESERVED_PREFIX}expiry-announced`;
/** On products: set when a delete has started, so a retry finishes it and no key is added. */
export const DELETING_ANNOTATION = `${RESERVED_PREFIX}deleting`;

// Kubernetes' label value syntax (validation.IsValidLabelValue).
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const MAX_LABEL_VALUE_LENGTH = 63;
/** 40 hex characters = 160 bits: collisions are not a practical concern. */
const HASH_LENGTH = 40;

/** A label value standing for an entity ref: `h` + 40 hex characters of its SHA-256. */
export function entityRefLabelValue(entityRef: string): string {
  return `h${createHash('sha256').update(entityRef).digest('hex').slice(0, HASH_LENGTH)}`;
}

/**
 * `value` itself when it is a valid label value that cannot be mistaken for a hash,
 * otherwise the hash of `<kind>:<value>`.
 */
function readableLabelValue(kind: string, value: string): string {
  return value.length <= MAX_LABEL_VALUE_LENGTH &&
    LABEL_VALUE.test(value) &&
    !/^h[0-9a-f]{40}$/.test(value)
    ? value
    : entityRefLabelValue(`${kind}:${value}`);
}

/**
 * A label value for a product name: the name itself when it is a valid label value
 * (so `kubectl get apikeys -l portal.backstage.io/product=toys` works), otherwise a hash.
 */
export function productLabelValue(productName: string): string {
  return readableLabelValue('product', productName);
}

/**
 * A label value for an MCP target: `MCPServer.example` (`mcpTargetKey` with `.`, since `/`
 * is not allowed in label values), or a hash when that is too long.
 */
export function mcpTargetLabelValue(target: { kind: string; name: string }): string {
  return readableLabelValue('mcp-target', `${target.kind}.${target.name}`);
}

/** A set-based selector term, `key in (a,b)`, for a non-empty list of values. */
export function inSelector(key: string, values: string[]): string {
  return `${key} in (${[...new Set(values)].sort().join(',')})`;
}

/** Refuses labels or annotations under the store's reserved prefix. */
export function assertNoReservedKeys(
  what: 'labels' | 'annotations',
  entries: Record<string, string> | undefined,
): void {
  for (const key of Object.keys(entries ?? {})) {
    if (key.startsWith(RESERVED_PREFIX)) {
      throw new InputError(
        `metadata.${what} may not use the prefix ${RESERVED_PREFIX} (reserved for the portal's own bookkeeping): ${key}`,
      );
    }
  }
}

/** `entries` without the store's own keys, or undefined when nothing is left. */
export function withoutReservedKeys(
  entries: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (entries === undefined) {
    return undefined;
  }
  const kept = Object.entries(entries).filter(([key]) => !key.startsWith(RESERVED_PREFIX));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** The store's own entries of `entries` (kept across replaces). */
export function reservedKeysOf(
  entries: Record<string, string> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(entries ?? {}).filter(([key]) => key.startsWith(RESERVED_PREFIX)),
  );
}
