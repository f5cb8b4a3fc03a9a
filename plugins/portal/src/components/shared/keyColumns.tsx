/*
 * What the tables of API keys share (My keys, and a product's own keys on its page): a row per
 * key, identified by its uid, and the column that shows its phase as a badge.
 */
import { Cell, type ColumnConfig } from '@backstage/ui';
import type { ApiKey } from '@devportal/plugin-portal-common';
import { PhaseBadge } from './PhaseBadge';

/** A table row of one API key. */
export interface KeyRow {
  id: string;
  key: ApiKey;
}

/** The row of `key`. */
export const keyRowOf = (key: ApiKey): KeyRow => ({ id: key.metadata.uid, key });

/** The key's phase (Pending, Approved, Rejected) as a badge. */
export const keyPhaseColumn: ColumnConfig<KeyRow> = {
  id: 'phase',
  label: 'Phase',
  cell: ({ key }) => (
    <Cell>
      <PhaseBadge phase={key.status?.phase} />
    </Cell>
  ),
};
