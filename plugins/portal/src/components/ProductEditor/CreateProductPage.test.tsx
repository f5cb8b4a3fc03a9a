import { mockApis } from '@backstage/frontend-test-utils';
import { portalApiProductCreatePermission } from '@devportal/plugin-portal-common';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  fakePortalApi,
  page,
  permissions,
  product,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { CreateProductPage } from './CreateProductPage';

const route = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { namespace: 'toystore', name: 'toystore' },
  spec: { hostnames: ['api.toystore.example.com'] },
};
const bob = mockApis.identity({
  userEntityRef: 'user:default/bob',
  ownershipEntityRefs: ['user:default/bob', 'group:default/payments-team'],
});

describe('CreateProductPage (fake portal API, fake permissions)', () => {
  it('creates a product from the HTTPRoute named in the address, for one of the person’s groups', async () => {
    const portal = fakePortalApi({
      listHttpRoutes: jest.fn(async () => page([route])),
      createApiProduct: jest.fn(async body =>
        product({ name: body.metadata.name, displayName: body.spec.displayName }),
      ),
    });
    await renderPortal(<CreateProductPage />, {
      initialRouteEntries: ['/portal/products/new?namespace=toystore&route=toystore'],
      apis: [[portalApiRef, portal], permissions(portalApiProductCreatePermission), bob],
    });
    const name = await screen.findByRole('textbox', { name: /^Name/ });
    const create = screen.getByRole('button', { name: 'Create product' });
    await userEvent.type(name, 'Bad Name');
    expect(await screen.findByText(/Lower-case letters, digits/)).toBeInTheDocument();
    expect(create).toBeDisabled();
    await userEvent.clear(name);
    await userEvent.type(name, 'toys');
    await userEvent.type(screen.getByRole('textbox', { name: /Display name/ }), 'Toys');
    await userEvent.click(screen.getByRole('button', { name: /Owner/ }));
    await userEvent.click(
      await screen.findByRole('option', { name: 'group:default/payments-team' }),
    );
    await userEvent.click(create);
    await waitFor(() => expect(portal.createApiProduct).toHaveBeenCalled());
    expect(portal.createApiProduct.mock.calls[0][0]).toMatchObject({
      metadata: {
        namespace: 'toystore',
        name: 'toys',
        annotations: { 'backstage.io/owner': 'group:default/payments-team' },
      },
      spec: {
        displayName: 'Toys',
        targetRef: { kind: 'HTTPRoute', name: 'toystore' },
        publishStatus: 'Draft',
      },
    });
  });

  it("shows the server's refusal (a name already taken)", async () => {
    const taken = await serverError(409, 'apiproduct toystore/toys already exists');
    const portal = fakePortalApi({
      listHttpRoutes: jest.fn(async () => page([route])),
      createApiProduct: rejecting(taken),
    });
    await renderPortal(<CreateProductPage />, {
      initialRouteEntries: ['/portal/products/new?namespace=toystore&route=toystore'],
      apis: [[portalApiRef, portal], permissions(portalApiProductCreatePermission), bob],
    });
    await userEvent.type(await screen.findByRole('textbox', { name: /^Name/ }), 'toys');
    await userEvent.type(screen.getByRole('textbox', { name: /Display name/ }), 'Toys');
    await userEvent.click(screen.getByRole('button', { name: 'Create product' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'apiproduct toystore/toys already exists',
    );
  });

  it('shows the forbidden state to people who may not create products', async () => {
    const portal = fakePortalApi({ listHttpRoutes: jest.fn(async () => page([route])) });
    await renderPortal(<CreateProductPage />, {
      apis: [[portalApiRef, portal], permissions(), bob],
    });
    expect(await screen.findByText('You may not see product creation')).toBeInTheDocument();
  });
});
