/*
 * A table fed page by page from a portal list route (spec portal-api §9): each page is one call
 * with `limit` and the previous page's `continue`; nothing loads a whole list. Built on
 * @backstage/ui's cursor-mode table state (which remembers the pages behind, so "previous" needs
 * no server support).
 *
 * A search narrows what a page shows without leaving paging to the client: a search page reads
 * server pages until it holds a page of matches (or the list ends) and continues from there.
 */
import { useTable, type TableItem, type UseTableResult } from '@backstage/ui';
import type { ListPage, PageQuery } from '@devportal/plugin-portal-common';
import { useCallback } from 'react';

/** Rows per page unless a page says otherwise. */
export const DEFAULT_ROWS_PER_PAGE = 20;

/** Options of {@link usePagedTable}. */
export interface PagedTableOptions<Record, Item extends TableItem, Filter> {
  /** One page of the list (the route's call with `limit` and `continue`). */
  load: (page: PageQuery, filter: Filter | undefined) => Promise<ListPage<Record>>;
  /** The row of a record (its `id` must be unique in the list). */
  toItem: (record: Record) => Item;
  /**
   * Which rows to keep (after `matches`): an asynchronous check per page, such as a permission
   * decision per row. Kept rows are what the table shows.
   */
  keep?: (items: Item[]) => Promise<Item[]>;
  /** Whether a row matches the search text (the table offers search only with this). */
  matches?: (item: Item, search: string) => boolean;
  /** A filter the list is loaded with; a change reloads from the first page. */
  filter?: Filter;
  pageSize?: number;
}

/** Table state and props for a paged portal list. */
export function usePagedTable<Record, Item extends TableItem, Filter = undefined>(
  options: PagedTableOptions<Record, Item, Filter>,
): UseTableResult<Item, Filter> {
  const { load, toItem, keep, matches } = options;
  const getData = useCallback(
    async (params: {
      cursor: string | undefined;
      pageSize: number;
      search: string;
      filter: Filter | undefined;
    }) => {
      const search = params.search.trim().toLowerCase();
      const rows: Item[] = [];
      let cursor = params.cursor;
      do {
        const page = await load({ limit: params.pageSize, continue: cursor }, params.filter);
        let items = page.items.map(toItem);
        if (search !== '' && matches) items = items.filter(item => matches(item, search));
        if (keep) items = await keep(items);
        rows.push(...items);
        cursor = page.metadata?.continue;
      } while (cursor !== undefined && rows.length < params.pageSize && (search !== '' || keep));
      return { data: rows, nextCursor: cursor };
    },
    [load, toItem, keep, matches],
  );
  return useTable<Item, Filter>({
    mode: 'cursor',
    getData,
    filter: options.filter,
    paginationOptions: {
      pageSize: options.pageSize ?? DEFAULT_ROWS_PER_PAGE,
      showPageSizeOptions: false,
    },
  });
}
