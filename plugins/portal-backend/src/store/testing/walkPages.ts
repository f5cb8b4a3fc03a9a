/*
 * One page walk for the tests of every paged list (stores, resource sources): follows
 * the cursors to the end and checks the paging invariants on the way — no page is larger
 * than the limit, and a cursor (more follow) never comes with an empty page.
 */
import type { Page, PageRequest } from '../types';

/** Every page of `list` in order; `betweenPages` runs after each page that has a cursor. */
export async function walkPages<T>(
  list: (page: PageRequest) => Promise<Page<T>>,
  limit: number,
  betweenPages: (pageIndex: number) => Promise<void> = async () => {},
): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    pages.push(page.items);
    cursor = page.cursor;
    if (cursor !== undefined) {
      expect(page.items.length).toBeGreaterThan(0);
      await betweenPages(pages.length);
    }
  } while (cursor !== undefined);
  return pages;
}
