/*
 * Column widths that keep a table's headers whole. @backstage/ui's table shrinks every column to
 * fit its container and cuts a header label that no longer fits with an ellipsis; in a narrow
 * window (768 px beside the app's sidebar) "Requested" became "Req…". Two things keep it whole:
 * the portal's styles let a header label wrap between its words (PortalStyles), and each column
 * gets a minimum width that holds the label's longest word. A table whose columns need more room
 * than its container grows wider than it instead, and its own scroll container lets a person
 * scroll to the columns on the right (the page itself never scrolls sideways).
 */
import type { ColumnConfig, TableItem } from '@backstage/ui';

/** A header's padding on either side (the table cell's `--bui-space-3`), in px. */
const HEADER_PADDING_PX = 12;
/**
 * Room for one character of a header label (`--bui-font-size-3`, 14 px, weight 600), in px:
 * generous, since the widest fallback font (DejaVu Sans Bold, on a Linux machine without the
 * app's fonts) needs about 10.
 */
const HEADER_CHARACTER_PX = 11;

/** The least width, in px, in which every word of `label` shows whole as a header. */
export function headerMinWidth(label: string): number {
  const longestWord = Math.max(0, ...label.split(/\s+/).map(word => word.length));
  return longestWord * HEADER_CHARACTER_PX + 2 * HEADER_PADDING_PX;
}

/**
 * `columns`, each with a minimum width in which the words of its text label show whole, unless
 * it sets a width of its own.
 */
export function readableColumns<Item extends TableItem>(
  columns: readonly ColumnConfig<Item>[],
): ColumnConfig<Item>[] {
  return columns.map(column =>
    (column.minWidth ?? column.width ?? undefined) !== undefined
      ? column
      : { ...column, minWidth: headerMinWidth(column.label) },
  );
}
