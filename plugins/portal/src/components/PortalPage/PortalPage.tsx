/*
 * The portal page (`/portal` by default): a tab bar over its own routes — the product catalog,
 * a product, product creation, My keys, the approval queue and the policy listings, and the
 * request links the portal's notifications carry. Paths are relative to wherever the app mounted
 * the page.
 */
import { Box, Header } from '@backstage/ui';
import { portalApiKeyReadAllPermission } from '@devportal/plugin-portal-common';
import { useMemo } from 'react';
import { Navigate, Route, Routes, useLocation, useResolvedPath } from 'react-router-dom';
import { AllKeysPage } from '../AllKeys/AllKeysPage';
import { ApprovalsPage } from '../Approvals/ApprovalsPage';
import { MyKeysPage } from '../MyKeys/MyKeysPage';
import { PoliciesPage } from '../Policies/PoliciesPage';
import { ProductCatalogPage } from '../ProductCatalog/ProductCatalogPage';
import { RequestLinkPage } from '../RequestLink/RequestLinkPage';
import { ProductDetailPage } from '../ProductDetail/ProductDetailPage';
import { CreateProductPage } from '../ProductEditor/CreateProductPage';
import { useDecision } from '../../hooks/usePermissions';
import { useReviewerRole } from '../../hooks/useReviewerRole';
import { PortalStyles } from '../shared/PortalStyles';
import { EmptyState } from '../shared/StateViews';
import { portalPaths, PortalPathsProvider } from './portalPaths';

/** The portal page with its tabs and routes. */
export function PortalPage() {
  const base = useResolvedPath('').pathname;
  const paths = useMemo(() => portalPaths(base), [base]);
  const { pathname } = useLocation();
  const tabs = [
    { id: 'catalog', label: 'API products', href: paths.catalog },
    { id: 'keys', label: 'My keys', href: paths.keys },
    { id: 'approvals', label: 'Approvals', href: paths.approvals },
    { id: 'all-keys', label: 'All keys', href: paths.allKeys },
    { id: 'policies', label: 'Policies', href: paths.policies },
  ];
  const active = tabs.slice(1).find(tab => pathname.startsWith(tab.href)) ?? tabs[0];
  // Approvals and All keys only for people with something to review (known once the role is);
  // All keys also for whoever may read every key.
  const role = useReviewerRole();
  const readAll = useDecision(portalApiKeyReadAllPermission);
  const reviewer = role !== undefined && role !== 'none';
  const shown = tabs.filter(
    tab =>
      (tab.id !== 'approvals' || reviewer) &&
      (tab.id !== 'all-keys' || reviewer || readAll.allowed),
  );
  return (
    <PortalPathsProvider value={paths}>
      <PortalStyles />
      <Header title={active.label} tabs={shown} activeTabId={active.id} />
      <Box px="5" py="4">
        <Routes>
          <Route index element={<ProductCatalogPage />} />
          <Route path="products/new" element={<CreateProductPage />} />
          <Route path="products/:namespace/:name" element={<ProductDetailPage />} />
          <Route path="keys" element={<MyKeysPage />} />
          <Route path="approvals" element={<ApprovalsPage />} />
          <Route path="all-keys" element={<AllKeysPage />} />
          <Route path="policies" element={<PoliciesPage />} />
          {/* The portal backend's notification links. */}
          <Route path="requests" element={<Navigate replace to={paths.keys} />} />
          <Route path="requests/:namespace/:name" element={<RequestLinkPage />} />
          <Route
            path="*"
            element={
              <EmptyState
                title="Page not found"
                description="The portal has no page at this address."
              />
            }
          />
        </Routes>
      </Box>
    </PortalPathsProvider>
  );
}
