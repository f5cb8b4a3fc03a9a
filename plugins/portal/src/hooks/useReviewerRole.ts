/*
 * Whether a person has anything to review — what decides if the Approvals and All keys pages
 * are for them, and whether their tabs are shown. An admin may read every key
 * (`portal.apikey.read.all`) or is allowed `portal.apikey.approve` outright; an API owner is allowed it only on their own products' keys (a conditional
 * decision, which the frontend's permission API cannot carry, so the check for no resource
 * comes back as not allowed) — for them the question is whether they own any product, which
 * the portal answers with one `/apiproducts?owner=<their refs>&limit=1`. Everyone else (a
 * consumer, who owns nothing) has nothing to review; so has a person the portal refuses that
 * listing (403: erin, without any portal role, once saw both tabs because a refusal counted as
 * "failed, offer the pages"). The server decides again on every call.
 */
import { ResponseError } from '@backstage/errors';
import { useApi } from '@backstage/frontend-plugin-api';
import {
  portalApiKeyApprovePermission,
  portalApiKeyReadAllPermission,
} from '@devportal/plugin-portal-common';
import { useLocation } from 'react-router-dom';
import { portalApiRef } from '../apis/PortalApi';
import { useAsyncData } from './useAsyncData';
import { useOwnership } from './useOwnership';
import { useDecision } from './usePermissions';

/** `admin`: may see or review any key; `owner`: owns a product; `none`: nothing to review. */
export type ReviewerRole = 'admin' | 'owner' | 'none';

/** The person's reviewer role; `undefined` while it is being found out. */
export function useReviewerRole(): ReviewerRole | undefined {
  const portal = useApi(portalApiRef);
  const approveAny = useDecision(portalApiKeyApprovePermission);
  const readAll = useDecision(portalApiKeyReadAllPermission);
  const ownership = useOwnership();
  // Asked again on every navigation: a person who just created their first product owns one.
  const { pathname } = useLocation();
  const owned = useAsyncData(async () => {
    if (ownership === undefined) return undefined;
    const page = await portal.listApiProducts({ owner: [...ownership.refs].join(','), limit: 1 });
    return page.items.length > 0;
  }, [portal, ownership, pathname]);
  if (approveAny.allowed || readAll.allowed) return 'admin';
  if (approveAny.loading || readAll.loading) return undefined;
  // Refused the listing: no product of theirs can be shown, so none reviewed.
  if (owned.error instanceof ResponseError && owned.error.statusCode === 403) return 'none';
  // Any other failure offers the pages rather than hiding them: they show the server's message.
  if (owned.error !== undefined) return 'owner';
  if (owned.value === undefined) return undefined;
  return owned.value ? 'owner' : 'none';
}
