/*
 * A @backstage/ui table over usePagedTable's state, with the portal's states: the server's
 * message when a page fails (a 403 says which permission is missing), a designed empty state,
 * and a name for assistive technology.
 */
import {
  Table,
  type ColumnConfig,
  type RowConfig,
  type TableItem,
  type TableSelection,
  type UseTableResult,
} from '@backstage/ui';
import type { ReactNode } from 'react';
import { statusOf } from './errors';
import { readableColumns } from './readableColumns';
import { ErrorState, ForbiddenState } from './StateViews';

/** Props of {@link PagedTable}. */
export interface PagedTableProps<Item extends TableItem> {
  /** The accessible name of the table's region, e.g. "API products". */
  label: string;
  table: UseTableResult<Item, any>;
  columns: readonly ColumnConfig<Item>[];
  emptyState: ReactNode;
  /** The permission a 403 means is missing. */
  permission: string;
  rowConfig?: RowConfig<Item>;
  selection?: TableSelection;
}

/** A paged list with loading, empty, error and forbidden states. */
export function PagedTable<Item extends TableItem>(props: PagedTableProps<Item>) {
  const { error } = props.table.tableProps;
  if (error !== undefined) {
    if (statusOf(error) === 403) {
      return <ForbiddenState what={props.label.toLowerCase()} permission={props.permission} />;
    }
    return <ErrorState title={`Could not load ${props.label.toLowerCase()}`} error={error} />;
  }
  return (
    <section aria-label={props.label}>
      <Table
        {...props.table.tableProps}
        columnConfig={readableColumns(props.columns)}
        emptyState={props.emptyState}
        rowConfig={props.rowConfig}
        selection={props.selection}
      />
    </section>
  );
}
