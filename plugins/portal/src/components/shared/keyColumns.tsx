/*
 * What the tables of API keys share (My keys, All keys, and a product's own keys on its page): a
 * row per key, identified by its uid, the column that shows its phase as a badge, and the review.
 */
import { Cell, type ColumnConfig } from '@backstage/ui';
import type { ApiKey } from '@devportal/plugin-portal-common';
import { formatDateTime, shortEntityRef } from './format';
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

/** What a key's row says about its review: who decided and when, or that it waits. */
export function keyReviewText(key: ApiKey): string {
  const status = key.status;
  if (status === undefined || status.phase === 'Pending') return 'Waiting for an owner';
  const by = shortEntityRef(status.reviewedBy);
  return `${status.phase} by ${by} on ${formatDateTime(status.reviewedAt)}`;
}
