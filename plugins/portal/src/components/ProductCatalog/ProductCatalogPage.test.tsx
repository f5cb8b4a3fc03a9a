import {
  portalApiProductCreatePermission,
  portalApiProductListPermission,
} from '@devportal/plugin-portal-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import { renderPortal } from '../../__testUtils__/renderPortal';
import {
  fakePortalApi,
  page,
  permissions,
  product,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { ProductCatalogPage } from './ProductCatalogPage';

describe('ProductCatalogPage (fake portal API, fake permissions)', () => {
  it('lists the first page of products, linking each to its page', async () => {
    const portal = fakePortalApi({
      listApiProducts: jest.fn(async () =>
        page([
          product({ name: 'toystore', displayName: 'Toystore', tags: ['toys'] }),
          product({ name: 'drafty', displayName: 'Drafty', publishStatus: 'Draft' }),
        ]),
      ),
    });
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductListPermission)],
    });
    const link = await screen.findByRole('link', { name: /Toystore/ });
    expect(link).toHaveAttribute('href', '/portal/products/toystore/toystore');
    const drafty = screen.getByRole('row', { name: /Drafty/ });
    expect(within(drafty).getByText('Draft')).toBeInTheDocument();
    expect(portal.listApiProducts).toHaveBeenCalledWith({ limit: 20, continue: undefined });
    expect(screen.queryByRole('link', { name: 'Create API product' })).not.toBeInTheDocument();
  });

  it('offers product creation to people who may create products', async () => {
    const portal = fakePortalApi({ listApiProducts: jest.fn(async () => page([])) });
    await renderPortal(<ProductCatalogPage />, {
      apis: [
        [portalApiRef, portal],
        permissions(portalApiProductListPermission, portalApiProductCreatePermission),
      ],
    });
    expect(await screen.findByRole('link', { name: 'Create API product' })).toHaveAttribute(
      'href',
      '/portal/products/new',
    );
  });

  it('pages through the API with its continue token', async () => {
    const portal = fakePortalApi({
      listApiProducts: jest.fn(async query =>
        query?.continue === 'token-2'
          ? page([product({ name: 'second', displayName: 'Second page product' })])
          : page([product({ name: 'first', displayName: 'First page product' })], 'token-2'),
      ),
    });
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductListPermission)],
    });
    await screen.findByRole('link', { name: /First page product/ });
    await userEvent.click(screen.getByRole('button', { name: /next/i }));
    await screen.findByRole('link', { name: /Second page product/ });
    expect(portal.listApiProducts).toHaveBeenLastCalledWith({ limit: 20, continue: 'token-2' });
    expect(screen.queryByRole('link', { name: /First page product/ })).not.toBeInTheDocument();
  });

  it('searches by name or tag, reading further pages until it has matches', async () => {
    const portal = fakePortalApi({
      listApiProducts: jest.fn(async query =>
        query?.continue === 'token-2'
          ? page([product({ name: 'payments', displayName: 'Payments', tags: ['money'] })])
          : page([product({ name: 'toystore', displayName: 'Toystore' })], 'token-2'),
      ),
    });
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductListPermission)],
    });
    await screen.findByRole('link', { name: /Toystore/ });
    await userEvent.type(screen.getByRole('searchbox', { name: 'Search by name or tag' }), 'money');
    expect(await screen.findByRole('link', { name: /Payments/ })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: /Toystore/ })).not.toBeInTheDocument();
  });

  it('says so when there is no product', async () => {
    const portal = fakePortalApi({ listApiProducts: jest.fn(async () => page([])) });
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductListPermission)],
    });
    expect(await screen.findByText('No API products yet')).toBeInTheDocument();
  });

  it("shows the server's message when the list fails", async () => {
    const error = await serverError(503, 'The portal store is unreachable; retry shortly');
    const portal = fakePortalApi({
      listApiProducts: rejecting(error),
    });
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductListPermission)],
    });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load api products');
    expect(alert).toHaveTextContent('The portal store is unreachable; retry shortly');
  });

  it('shows the forbidden state, without asking the server, to people without the list permission', async () => {
    const portal = fakePortalApi();
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(await screen.findByText('You may not see API products')).toBeInTheDocument();
    expect(screen.getByText(/portal\.apiproduct\.list/)).toBeInTheDocument();
    await waitFor(() => expect(portal.listApiProducts).not.toHaveBeenCalled());
  });

  it('shows a loading state until the first page arrives', async () => {
    let answer: (value: ReturnType<typeof page>) => void = () => {};
    const portal = fakePortalApi({
      listApiProducts: jest.fn(() => new Promise(resolve => (answer = resolve as any))),
    });
    await renderPortal(<ProductCatalogPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductListPermission)],
    });
    await waitFor(() => expect(portal.listApiProducts).toHaveBeenCalled());
    expect(screen.queryByRole('link', { name: /Toystore/ })).not.toBeInTheDocument();
    answer(page([product({ name: 'toystore', displayName: 'Toystore' })]));
    expect(await screen.findByRole('link', { name: /Toystore/ })).toBeInTheDocument();
  });
});
