/*
 * Reading one list (tools, resources, templates, prompts) of a backend page by page, within the
 * broker's bounds (`mcpBroker.backendLimits`): at most `maxItems` items and `maxPages` pages.
 * The items kept are the first ones in the backend's own order (page after page, each page in
 * its order); reading stops as soon as the bound is reached, so a backend with a million tools
 * or a cursor that never ends costs at most `maxPages` requests and `maxItems` items of memory
 * (each page is one message, itself bounded by the transport's 16 MiB message limit).
 */
import { isPlainObject } from '../protocol/jsonRpc';

/** The bounds of one list of one backend. */
export interface ListLimits {
  /** Most items kept of one list. */
  readonly maxItems: number;
  /** Most pages requested for one list. */
  readonly maxPages: number;
}

/** Which bound cut a list: its item count, or its page count (a cursor that did not end). */
export type ListTruncation = 'items' | 'pages';

/** One list as read. */
export interface PagedList {
  items: Record<string, unknown>[];
  /** Set when the backend had more than the bounds let the broker read. */
  truncated?: ListTruncation;
  /** The smallest `ttlMs` of its pages (2026-07-28 backends). */
  ttlMs?: number;
}

/**
 * Reads the list under `key` of the pages `requestPage` fetches (`undefined`: the first page),
 * following `nextCursor` within `limits`; see the file comment.
 */
export async function readPagedList(
  key: string,
  requestPage: (cursor: string | undefined) => Promise<Record<string, unknown>>,
  limits: ListLimits,
): Promise<PagedList> {
  const list: PagedList = { items: [] };
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page === limits.maxPages) {
      list.truncated = 'pages';
      return list;
    }
    const result = await requestPage(cursor);
    if (typeof result.ttlMs === 'number') {
      // Pages of one list may differ; the list is as fresh as its shortest-lived page.
      list.ttlMs = Math.min(list.ttlMs ?? result.ttlMs, result.ttlMs);
    }
    const pageItems = Array.isArray(result[key]) ? result[key].filter(isPlainObject) : [];
    const room = limits.maxItems - list.items.length;
    list.items.push(...pageItems.slice(0, room));
    const next = result.nextCursor;
    const more = typeof next === 'string' && next !== '';
    if (pageItems.length > room || (more && pageItems.length === room)) {
      list.truncated = 'items';
      return list;
    }
    if (!more) return list;
    cursor = next;
  }
}

/** What the log says of a list `key` cut by `truncated` (after the server's name). */
export function describeTruncation(
  key: string,
  truncated: ListTruncation,
  { maxItems, maxPages }: ListLimits,
): string {
  return truncated === 'items'
    ? `listed more than ${maxItems} ${key} (mcpBroker.backendLimits.maxListItems); ` +
        `the first ${maxItems} in its order are served`
    : `still had a ${key} cursor after ${maxPages} pages (mcpBroker.backendLimits.maxListPages); ` +
        'the items of those pages are served';
}
