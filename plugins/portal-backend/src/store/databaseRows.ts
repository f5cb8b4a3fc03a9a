import {
  DEVPORTAL_API_VERSION,
  isMcpTarget,
  mcpTargetKey,
  type ApiKey,
  type ApiKeyPhase,
  type ApiKeySpec,
  type McpTargetKind,
  type TargetRef,
} from '@devportal/plugin-portal-common';
import type { StoredApiProduct } from './types';

/** Table of API products (see the migrations). */
export const PRODUCTS_TABLE = 'portal_api_products';
/** Table of API keys (key requests), without their secrets. */
export const KEYS_TABLE = 'portal_api_keys';
/** Table of key secrets; read by `revealSecret` only. */
export const SECRETS_TABLE = 'portal_api_key_secrets';

/** A row of {@link PRODUCTS_TABLE}. */
export interface ProductRow {
  namespace: string;
  name: string;
  uid: string;
  resource_version: number | string;
  created_at: string;
  owner: string;
  labels: string | null;
  annotations: string | null;
  spec: string;
  /** `spec.targetRef.kind` (migrations/20261208000000_mcp_targets.js). */
  target_kind: string;
  /** `spec.targetRef.name`. */
  target_name: string;
}

/** A row of {@link KEYS_TABLE}. */
export interface KeyRow {
  namespace: string;
  name: string;
  uid: string;
  resource_version: number | string;
  created_at: string;
  product_name: string;
  plan_tier: string;
  use_case: string | null;
  requested_by: string;
  requester_email: string | null;
  expires_at: string | null;
  phase: ApiKeyPhase;
  reviewed_by: string | null;
  reviewed_at: string | null;
  reason: string | null;
  // SQLite returns 0/1, PostgreSQL a boolean.
  secret_revealed: boolean | number;
  secret_revealed_at: string | null;
  /** `mcpTargetKey` of the product's target for an access request; null for an HTTP key. */
  mcp_target: string | null;
}

/** Every column of {@link KEYS_TABLE}, listed so no query ever selects more. */
export const KEY_COLUMNS: Array<keyof KeyRow> = [
  'namespace',
  'name',
  'uid',
  'resource_version',
  'created_at',
  'product_name',
  'plan_tier',
  'use_case',
  'requested_by',
  'requester_email',
  'expires_at',
  'phase',
  'reviewed_by',
  'reviewed_at',
  'reason',
  'secret_revealed',
  'secret_revealed_at',
  'mcp_target',
];

/** An RFC 3339 timestamp of now, in seconds as Kubernetes writes them. */
export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** JSON text of a map, or null for absent. */
export function jsonOrNull(value: object | undefined): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/** Copies `value` under `key` only when it is neither null nor undefined. */
function optional<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as {
    [P in K]?: V;
  };
}

/** The target columns of a product row, from its `spec.targetRef`. */
export function targetColumns(
  targetRef: TargetRef,
): Pick<ProductRow, 'target_kind' | 'target_name'> {
  return { target_kind: targetRef.kind, target_name: targetRef.name };
}

/** The `mcp_target` of a key of a product with this target (null for an HTTPRoute). */
export function mcpTargetColumn(targetRef: { kind: string; name: string }): string | null {
  return isMcpTarget(targetRef) ? mcpTargetKey(targetRef) : null;
}

/** `spec.mcpTarget` of a key from its `mcp_target` column (`MCPServer/example`). */
function mcpTargetOfColumn(column: string | null): ApiKeySpec['mcpTarget'] {
  if (column === null) return undefined;
  const slash = column.indexOf('/');
  return { kind: column.slice(0, slash) as McpTargetKind, name: column.slice(slash + 1) };
}

/** The object metadata every row carries (the same columns in both tables). */
function metadataOfRow(row: ProductRow | KeyRow) {
  return {
    namespace: row.namespace,
    name: row.name,
    uid: row.uid,
    resourceVersion: String(row.resource_version),
    creationTimestamp: row.created_at,
  };
}

/** The API object of a product row. */
export function productFromRow(row: ProductRow): StoredApiProduct {
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind: 'APIProduct',
    metadata: {
      ...metadataOfRow(row),
      ...optional('labels', row.labels === null ? null : JSON.parse(row.labels)),
      ...optional('annotations', row.annotations === null ? null : JSON.parse(row.annotations)),
    },
    spec: JSON.parse(row.spec),
  };
}

/** The API object of a key row (never its secret). */
export function keyFromRow(row: KeyRow): ApiKey {
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind: 'APIKey',
    metadata: metadataOfRow(row),
    spec: {
      apiProductRef: { name: row.product_name },
      planTier: row.plan_tier,
      ...optional('useCase', row.use_case),
      requestedBy: {
        userId: row.requested_by,
        ...optional('email', row.requester_email),
      },
      ...optional('expiresAt', row.expires_at),
      ...optional('mcpTarget', mcpTargetOfColumn(row.mcp_target)),
    },
    status: {
      phase: row.phase,
      ...optional('reviewedBy', row.reviewed_by),
      ...optional('reviewedAt', row.reviewed_at),
      ...optional('reason', row.reason),
      secretRevealed: Boolean(row.secret_revealed),
      ...optional('secretRevealedAt', row.secret_revealed_at),
    },
  };
}
