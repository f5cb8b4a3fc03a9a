/*
 * Where the portal backend's notifications point (`portal.notifications`' defaults):
 * `/portal/requests/:namespace/:name` for one request and `/portal/requests` for several. A
 * request the person made opens My keys; any other one (a request for a product they own) opens
 * the approval queue in its namespace. The person's own requests are read page by page from
 * `/requests/my` in that namespace — the API has no single-request route.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Navigate, useParams } from 'react-router-dom';
import { portalApiRef } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { ErrorState, LoadingState } from '../shared/StateViews';

/** `/portal/requests/:namespace/:name`: opens the page where the request can be acted on. */
export function RequestLinkPage() {
  const { namespace = '', name = '' } = useParams();
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const mine = useAsyncData(async () => {
    for await (const page of portal.listMyRequestsPages({ namespace })) {
      if (page.items.some(key => key.metadata.name === name)) return true;
    }
    return false;
  }, [portal, namespace, name]);
  if (mine.loading) return <LoadingState what="the request" />;
  if (mine.error !== undefined) {
    return <ErrorState title="Could not open the request" error={mine.error} />;
  }
  return (
    <Navigate
      replace
      to={mine.value ? paths.keys : `${paths.approvals}?namespace=${encodeURIComponent(namespace)}`}
    />
  );
}
