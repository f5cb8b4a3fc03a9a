/**
 * The two patch formats kube-apiserver accepts for every resource:
 * JSON merge patch (RFC 7386) and JSON patch (RFC 6902). Errors are the
 * Status objects the real server answers with (400 for an undecodable patch,
 * 422 for a JSON patch that does not apply).
 */
import { badRequest, unprocessablePatch } from './statusErrors';

/** Patch content types (the values of client-node's `PatchStrategy`). */
export const PATCH_CONTENT_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategicMerge: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      result[key] = applyMergePatch(result[key], value);
    }
  }
  return result;
}

/** Parses a merge-patch body; it must be a JSON object. */
export function parseMergePatch(body: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
  if (!isObject(parsed)) {
    // jsonpatch.MergePatch answers ErrBadJSONPatch for a non-object document.
    throw badRequest('Invalid JSON Patch');
  }
  return parsed;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** Parses a JSON patch body; it must be an array of operations. */
export function parseJsonPatch(body: string): JsonPatchOp[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) {
    // What evanphx/json-patch's DecodePatch says when handed a merge patch.
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  return parsed as JsonPatchOp[];
}

function decodePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) {
    throw unprocessablePatch(`JSON pointer must start with '/': ${path}`);
  }
  return path
    .slice(1)
    .split('/')
    .map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isObject(v)) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map(k => [k, canonical(v[k])]),
    );
  }
  return v;
}

/** RFC 6902 operations: add, remove, replace, move, copy, test. */
export function applyJsonPatch(target: unknown, ops: JsonPatchOp[]): unknown {
  let doc = structuredClone(target);
  const parentOf = (segments: string[], op: string) => {
    let node: any = doc;
    for (const seg of segments.slice(0, -1)) {
      node = Array.isArray(node) ? node[Number(seg)] : node?.[seg];
      if (node === undefined || node === null || typeof node !== 'object') {
        throw unprocessablePatch(
          `${op} operation does not apply: doc is missing path: /${segments.join('/')}`,
        );
      }
    }
    return node;
  };
  const get = (path: string) => {
    let node: any = doc;
    for (const seg of decodePointer(path)) {
      if (node === null || typeof node !== 'object' || !(seg in node)) {
        throw unprocessablePatch(`doc is missing path: ${path}`);
      }
      node = node[seg];
    }
    return node;
  };
  const remove = (path: string, op: string) => {
    const segments = decodePointer(path);
    const parent = parentOf(segments, op);
    const last = segments[segments.length - 1];
    if (Array.isArray(parent)) {
      const i = Number(last);
      if (!Number.isInteger(i) || i < 0 || i >= parent.length) {
        throw unprocessablePatch(`${op} operation does not apply: doc is missing path: ${path}`);
      }
      return parent.splice(i, 1)[0];
    }
    if (!(last in parent)) {
      throw unprocessablePatch(`${op} operation does not apply: doc is missing path: ${path}`);
    }
    const value = parent[last];
    delete parent[last];
    return value;
  };
  const add = (path: string, value: unknown, op: string) => {
    const segments = decodePointer(path);
    if (segments.length === 0) {
      doc = value;
      return;
    }
    const parent = parentOf(segments, op);
    const last = segments[segments.length - 1];
    if (Array.isArray(parent)) {
      const i = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(i) || i < 0 || i > parent.length) {
        throw unprocessablePatch(`${op} operation does not apply: doc is missing path: ${path}`);
      }
      parent.splice(i, 0, value);
    } else {
      parent[last] = value;
    }
  };
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        add(op.path, structuredClone(op.value), 'add');
        break;
      case 'remove':
        remove(op.path, 'remove');
        break;
      case 'replace':
        remove(op.path, 'replace');
        add(op.path, structuredClone(op.value), 'replace');
        break;
      case 'move':
        add(op.path, remove(op.from ?? '', 'move'), 'move');
        break;
      case 'copy':
        add(op.path, structuredClone(get(op.from ?? '')), 'copy');
        break;
      case 'test':
        if (!deepEqual(get(op.path), op.value)) {
          throw unprocessablePatch(`testing value ${op.path} failed: test failed`);
        }
        break;
      default:
        throw unprocessablePatch(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

export { deepEqual };
