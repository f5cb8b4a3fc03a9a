/* A key's phase and a product's publish status as short labelled badges. */
import { Badge } from '@backstage/ui';
import type { ApiKeyPhase, PublishStatus } from '@devportal/plugin-portal-common';

/** `Pending`, `Approved` or `Rejected`. */
export function PhaseBadge(props: { phase: ApiKeyPhase | undefined }) {
  return <Badge size="small">{props.phase ?? 'Unknown'}</Badge>;
}

/** `Draft` (marked for owners) or `Published`. */
export function PublishBadge(props: { status: PublishStatus }) {
  return <Badge size="small">{props.status}</Badge>;
}
