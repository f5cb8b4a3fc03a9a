/*
 * What an access request of an MCP product means for its requester now (contract mcp-access
 * §4.1): a grant while Approved and before its `expiresAt`; "Expired" is Approved with
 * `expiresAt` passed (not a phase of its own).
 */
import type { ApiKey } from '@devportal/plugin-portal-common';

/** Whether an Approved key's `expiresAt` has passed at `now`. */
export function isExpired(key: ApiKey, now: Date = new Date()): boolean {
  const expiresAt = key.spec.expiresAt;
  return (
    key.status?.phase === 'Approved' &&
    expiresAt !== undefined &&
    new Date(expiresAt).getTime() <= now.getTime()
  );
}

/** Whether the key is a live grant at `now`: Approved and not expired. */
export function isLiveGrant(key: ApiKey, now: Date = new Date()): boolean {
  return key.status?.phase === 'Approved' && !isExpired(key, now);
}
