/*
 * The counter columns (calls, errors, rate-limited) the usage tables share, after a first
 * column of their own.
 */
import type { ColumnConfig, TableItem } from '@backstage/ui';
import { TextCell } from '../shared/TextCell';

/** A row with the three counters. */
export interface CounterRow extends TableItem {
  calls: number;
  errors: number;
  rateLimited: number;
}

const number = (value: number) => <TextCell title={value.toLocaleString('en')} />;

/** Calls, errors and rate-limited columns. */
export function counterColumns<Row extends CounterRow>(): ColumnConfig<Row>[] {
  return [
    { id: 'calls', label: 'Calls', cell: row => number(row.calls) },
    { id: 'errors', label: 'Errors', cell: row => number(row.errors) },
    { id: 'rateLimited', label: 'Rate-limited', cell: row => number(row.rateLimited) },
  ];
}
