/*
 * The access grants as `GET /status` shows them (contract mcp-access §6.7): the sources, this
 * replica's index (revision, live grants, freshness) and its last full sync. Counts only: no
 * subject, no product.
 */
import type { AccessGrantsStatus } from '@devportal/plugin-mcp-broker-common';
import type { AccessGrantFullSync } from './AccessGrantFullSync';
import type { AccessGrantSources } from './AccessGrantSources';
import type { GrantIndex } from './GrantIndex';

/** The `accessGrants` object of `/status` now. */
export function accessGrantsStatus(
  sources: AccessGrantSources,
  index: GrantIndex,
  fullSync: AccessGrantFullSync,
): AccessGrantsStatus {
  const counts = index.counts();
  const lastFullSync = fullSync.lastRun();
  return {
    sources: sources.list().map(source => source.id),
    revision: counts.revision,
    live: counts.grants,
    ...(counts.freshAt > 0 && { freshAt: new Date(counts.freshAt).toISOString() }),
    stale: !counts.fresh,
    ...(lastFullSync !== undefined && { lastFullSync: { ...lastFullSync } }),
  };
}
