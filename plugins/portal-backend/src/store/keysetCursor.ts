/*
 * The page position of the stores that order by (creation time, namespace, name): the
 * database store (keyset queries) and the manifest source (in memory). A cursor is the
 * sort key of the last item of a page, so the next page starts strictly after it: an
 * item keeps its place while it exists (creation time never changes), hence a walk never
 * repeats an item and never skips one that existed when the walk began, whatever is
 * inserted or deleted meanwhile.
 *
 * The cursor is plain base64url JSON: integrity and binding to route, filters and caller
 * are the page token's job (router/PageTokens.ts), which seals this text. A cursor that
 * does not parse is an InputError.
 */
import { InputError } from '@backstage/errors';
import type { Page, PageRequest } from './types';

/** The sort key of an item: RFC 3339 creation time (fixed width, UTC), namespace, name. */
export interface KeysetPosition {
  createdAt: string;
  namespace: string;
  name: string;
}

/** The cursor text of a position. */
export function encodeKeysetCursor(position: KeysetPosition): string {
  const { createdAt, namespace, name } = position;
  return Buffer.from(JSON.stringify([createdAt, namespace, name])).toString('base64url');
}

/** The position a cursor stands for; InputError when it is not one of ours. */
export function decodeKeysetCursor(cursor: string): KeysetPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    !parsed.every(part => typeof part === 'string')
  ) {
    throw new InputError('continue token does not mark a page position');
  }
  const [createdAt, namespace, name] = parsed as string[];
  return { createdAt, namespace, name };
}

/** Compares two positions in page order (creation time, namespace, name; code points). */
export function compareKeysetPositions(a: KeysetPosition, b: KeysetPosition): number {
  return (
    compareText(a.createdAt, b.createdAt) ||
    compareText(a.namespace, b.namespace) ||
    compareText(a.name, b.name)
  );
}

function compareText(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/**
 * A keyset page over items held in memory (the manifest source): the same order and
 * cursors as the database store's queries.
 */
export function pageInMemory<T>(
  items: T[],
  positionOf: (item: T) => KeysetPosition,
  page: PageRequest,
): Page<T> {
  const after = page.cursor === undefined ? undefined : decodeKeysetCursor(page.cursor);
  const sorted = items
    .map(item => ({ item, position: positionOf(item) }))
    .filter(({ position }) => after === undefined || compareKeysetPositions(position, after) > 0)
    .sort((a, b) => compareKeysetPositions(a.position, b.position));
  const kept = sorted.slice(0, page.limit);
  return {
    items: kept.map(({ item }) => item),
    cursor:
      sorted.length > page.limit ? encodeKeysetCursor(kept[kept.length - 1].position) : undefined,
  };
}
