import { mockApis } from '@backstage/frontend-test-utils';
import {
  portalApiKeyCreatePermission,
  portalApiProductDeleteOwnPermission,
  portalApiProductUpdateAllPermission,
  portalApiProductUpdateOwnPermission,
} from '@devportal/plugin-portal-common';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  fakePortalApi,
  pagesOf,
  permissions,
  product,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { ProductDetailPage } from './ProductDetailPage';

const at = {
  mountPath: '/portal/products/:namespace/:name',
  initialRouteEntries: ['/portal/products/toystore/toystore'],
};
const alice = mockApis.identity({
  userEntityRef: 'user:default/alice',
  ownershipEntityRefs: ['user:default/alice'],
});
const bob = mockApis.identity({
  userEntityRef: 'user:default/bob',
  ownershipEntityRefs: ['user:default/bob', 'group:default/payments-team'],
});

describe('ProductDetailPage (fake portal API, fake permissions)', () => {
  it("shows the product's description, docs, contact and plans, and offers access to consumers", async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () =>
        product({ name: 'toystore', displayName: 'Toystore', description: 'Toys as a service' }),
      ),
      listMyRequestsPages: jest.fn(() => pagesOf<never>([])),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], permissions(portalApiKeyCreatePermission), alice],
    });
    expect(await screen.findByRole('heading', { name: 'Toystore' })).toBeInTheDocument();
    expect(screen.getByText('Toys as a service')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Documentation' })).toHaveAttribute(
      'href',
      'https://docs.example.com/toystore',
    );
    expect(screen.getByRole('link', { name: 'payments@example.com' })).toBeInTheDocument();
    const plans = screen.getByRole('region', { name: 'Plans' });
    expect(within(plans).getByRole('row', { name: /gold/ })).toHaveTextContent('100,000 per day');
    expect(screen.getByRole('button', { name: 'Request access' })).toBeInTheDocument();
    // alice owns nothing here: no owner actions.
    expect(screen.queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Delete' })).not.toBeInTheDocument();
    expect(portal.getApiProduct).toHaveBeenCalledWith({ namespace: 'toystore', name: 'toystore' });
  });

  it('shows no request button to people who may not request keys', async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => product({ name: 'toystore', displayName: 'Toystore' })),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], permissions(), alice],
    });
    await screen.findByRole('heading', { name: 'Toystore' });
    expect(screen.queryByRole('button', { name: 'Request access' })).not.toBeInTheDocument();
  });

  it("gives the product's owners edit, unpublish and delete; .own does not cover others' products", async () => {
    const owned = fakePortalApi({
      getApiProduct: jest.fn(async () =>
        product({
          name: 'toystore',
          displayName: 'Toystore',
          owner: 'group:default/payments-team',
        }),
      ),
    });
    const view = await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, owned],
        permissions(portalApiProductUpdateOwnPermission, portalApiProductDeleteOwnPermission),
        bob,
      ],
    });
    await screen.findByRole('heading', { name: 'Toystore' });
    expect(await screen.findByRole('button', { name: 'Edit' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Unpublish' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Delete' })).toBeInTheDocument();
    view.unmount();

    const others = fakePortalApi({
      getApiProduct: jest.fn(async () =>
        product({ name: 'toystore', displayName: 'Toystore', owner: 'group:default/other-team' }),
      ),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, others],
        permissions(portalApiProductUpdateOwnPermission, portalApiProductDeleteOwnPermission),
        bob,
      ],
    });
    await screen.findByRole('heading', { name: 'Toystore' });
    expect(screen.queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Delete' })).not.toBeInTheDocument();
  });

  it("publishes a Draft with a merge patch and shows the server's refusal", async () => {
    const refusal = await serverError(409, 'apiproduct toystore/toystore was changed meanwhile');
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () =>
        product({ name: 'toystore', displayName: 'Toystore', publishStatus: 'Draft' }),
      ),
      updateApiProduct: rejecting(refusal),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], permissions(portalApiProductUpdateAllPermission), alice],
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Publish' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'apiproduct toystore/toystore was changed meanwhile',
    );
    expect(portal.updateApiProduct).toHaveBeenCalledWith(
      expect.objectContaining({ namespace: 'toystore', name: 'toystore' }),
      { metadata: { resourceVersion: '1' }, spec: { publishStatus: 'Published' } },
    );
  });

  it('says a product it may not read is not found, as the server answers', async () => {
    const missing = await serverError(404, 'apiproduct toystore/toystore not found');
    const portal = fakePortalApi({
      getApiProduct: rejecting(missing),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], permissions(), alice],
    });
    expect(await screen.findByText('API product not found')).toBeInTheDocument();
  });

  it("shows the server's message when the product cannot be loaded", async () => {
    const failure = await serverError(503, 'The portal store timed out');
    const portal = fakePortalApi({
      getApiProduct: rejecting(failure),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], permissions(), alice],
    });
    expect(await screen.findByRole('alert')).toHaveTextContent('The portal store timed out');
  });
});
