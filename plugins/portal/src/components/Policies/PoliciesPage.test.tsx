import {
  portalApiProductCreatePermission,
  portalApiProductListPermission,
  portalPlanPolicyListPermission,
} from '@devportal/plugin-portal-common';
import { screen, within } from '@testing-library/react';
import { portalApiRef } from '../../apis/PortalApi';
import { fakePortalApi, page, permissions } from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { PoliciesPage } from './PoliciesPage';

const object = (kind: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind,
  metadata: { namespace: 'toystore', name },
  spec,
});
const target = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' };

describe('PoliciesPage (fake portal API, fake permissions)', () => {
  it('shows each listing its permission allows, and the forbidden state for the others', async () => {
    const portal = fakePortalApi({
      listHttpRoutes: jest.fn(async () =>
        page([object('HTTPRoute', 'toystore', { hostnames: ['api.toystore.example.com'] })]),
      ),
      listPlanPolicies: jest.fn(async () =>
        page([
          object('PlanPolicy', 'toystore-plans', {
            targetRef: target,
            plans: [{ tier: 'gold', limits: { daily: 100000 } }],
          }),
        ]),
      ),
    });
    await renderPortal(<PoliciesPage />, {
      apis: [
        [portalApiRef, portal],
        permissions(
          portalApiProductListPermission,
          portalPlanPolicyListPermission,
          portalApiProductCreatePermission,
        ),
      ],
    });
    const routes = await screen.findByRole('region', { name: 'HTTPRoutes' });
    expect(await within(routes).findByText('api.toystore.example.com')).toBeInTheDocument();
    expect(
      within(routes).getByRole('link', { name: 'Create product from toystore/toystore' }),
    ).toHaveAttribute('href', '/portal/products/new?namespace=toystore&route=toystore');
    const plans = screen.getByRole('region', { name: 'PlanPolicies' });
    expect(await within(plans).findByText('gold (100,000 per day)')).toBeInTheDocument();
    expect(screen.getByText('You may not see AuthPolicies')).toBeInTheDocument();
    expect(screen.getByText('You may not see RateLimitPolicies')).toBeInTheDocument();
    expect(portal.listAuthPolicies).not.toHaveBeenCalled();
    expect(portal.listRateLimitPolicies).not.toHaveBeenCalled();
  });
});
