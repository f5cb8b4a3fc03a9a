/*
 * Pages of the Kubernetes store and source over the API server's own `limit`/`continue`
 * (spec §9).
 *
 * Order. The API server lists in its storage order — namespace, then name — and cannot
 * sort by creation time; sorting in the portal would mean reading every object for every
 * page, which is what paging is meant to avoid. So the Kubernetes store's pages follow
 * the API server's order, which gives the same guarantee the contract asks the order for:
 * an object keeps its place while it exists, so a walk never repeats an object and never
 * skips one that existed when it began (the API server even serves every `continue` from
 * the snapshot of the first page, so objects created during the walk do not show up).
 *
 * A list is a sequence of segments, each one API server list (a namespace, or the whole
 * cluster, with a label selector), walked one after the other: a namespace allow-list is
 * walked namespace by namespace (sorted, so the order is the cluster-wide one), and the
 * ownership filter of keys — two disjoint label-selector lists, the caller's own requests
 * and the other requests for the caller's products — walks the first, then the second.
 *
 * The cursor is the segment's index and the API server's continue token. Filters the API
 * server cannot apply (a key's phase lives in its status) are applied to each chunk; a
 * page then takes more chunks until it is full. "More follow" is answered exactly: after
 * a full page the pager peeks one matching object ahead (chunks of 1) and keeps the
 * cursor from before the peek. A 410 for an expired API server token is an InputError
 * (kubernetesErrors.ts): the client starts its walk again.
 */
import { InputError } from '@backstage/errors';
import type { Page, PageRequest } from '../types';
import type { ListChunk, ListChunkOptions } from './kubernetesClient';

/** One API server list of a paged walk. */
export interface ListSegment {
  /** Undefined = cluster-wide. */
  namespace?: string;
  labelSelector?: string;
}

/** Reads one chunk of a segment (the caller binds the resource type). */
export type ChunkReader<T> = (options: ListChunkOptions) => Promise<ListChunk & { items: T[] }>;

interface SegmentCursor {
  /** Index of the segment the next page starts in. */
  s: number;
  /** The API server's continue token within that segment. */
  c?: string;
}

/**
 * One page of the objects of `segments` (in order) that pass `keep`, starting at
 * `page.cursor`.
 */
export async function pageSegments<T>(
  segments: ListSegment[],
  read: ChunkReader<T>,
  keep: (item: T) => boolean,
  page: PageRequest,
): Promise<Page<T>> {
  let position = decodeSegmentCursor(page.cursor);
  const items: T[] = [];
  const next = async (limit: number) => {
    const segment = segments[position.s];
    const chunk = await read({ ...segment, limit, continue: position.c });
    position =
      chunk.continue === undefined ? { s: position.s + 1 } : { s: position.s, c: chunk.continue };
    return chunk.items.filter(keep);
  };
  while (items.length < page.limit && position.s < segments.length) {
    items.push(...(await next(page.limit - items.length)));
  }
  // Peek: is there one more matching object? Keep the cursor from before it.
  while (position.s < segments.length) {
    const before = position;
    if ((await next(1)).length > 0) {
      return { items, cursor: encodeSegmentCursor(before) };
    }
  }
  return { items };
}

/** The segments of a namespace scope: cluster-wide, or each namespace in order. */
export function namespaceSegments(
  namespaces: string[] | undefined,
  labelSelector?: string,
): ListSegment[] {
  if (namespaces === undefined) {
    return [{ labelSelector }];
  }
  return [...new Set(namespaces)]
    .sort((a, b) => (a < b ? -1 : 1))
    .map(namespace => ({ namespace, labelSelector }));
}

function encodeSegmentCursor(cursor: SegmentCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeSegmentCursor(cursor: string | undefined): SegmentCursor {
  if (cursor === undefined) {
    return { s: 0 };
  }
  let parsed: Partial<SegmentCursor> | undefined;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    parsed === undefined ||
    parsed === null ||
    !Number.isInteger(parsed.s) ||
    (parsed.s as number) < 0 ||
    (parsed.c !== undefined && typeof parsed.c !== 'string')
  ) {
    throw new InputError('continue token does not mark a page position');
  }
  return { s: parsed.s as number, c: parsed.c };
}
