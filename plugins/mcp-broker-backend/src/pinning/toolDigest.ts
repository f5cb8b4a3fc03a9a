/*
 * What a pin compares (spec §13): a tool's name, description, annotations, input and output
 * schema — the parts a model reads and acts on — as canonical JSON (object keys sorted, so a
 * backend that reorders keys changes nothing) and its SHA-256. Other members (`title`, `icons`,
 * `_meta`, `execution`) are not pinned: they change presentation or transport, not what a call
 * does.
 */
import { createHash } from 'node:crypto';

/** The pinned parts of a tool definition, canonical. */
export type PinnedDefinition = Record<string, unknown>;

/** The members of a tool that a pin covers, in the spec's order. */
export const PINNED_MEMBERS = [
  'name',
  'description',
  'annotations',
  'inputSchema',
  'outputSchema',
] as const;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      sorted[key] = canonical((value as Record<string, unknown>)[key]);
    }
    return sorted;
  }
  return value;
}

/** The pinned members of `tool` (a backend's own definition), canonical. */
export function pinnedDefinitionOf(tool: Record<string, unknown>): PinnedDefinition {
  const definition: PinnedDefinition = {};
  for (const member of PINNED_MEMBERS) {
    if (tool[member] !== undefined) definition[member] = canonical(tool[member]);
  }
  return definition;
}

const digests = new WeakMap<object, string>();

/**
 * The SHA-256 (hex) of a tool's pinned definition. Remembered per list item: a backend's lists
 * are rebuilt only when they change, so each item is hashed once.
 */
export function toolDigest(tool: Record<string, unknown>): string {
  const known = digests.get(tool);
  if (known !== undefined) return known;
  const digest = createHash('sha256')
    .update(JSON.stringify(pinnedDefinitionOf(tool)))
    .digest('hex');
  digests.set(tool, digest);
  return digest;
}

/** The stored key of a tool name (one length whatever the name). */
export function toolKeyOf(tool: string): string {
  return createHash('sha256').update(tool).digest('hex');
}
