/*
 * The portal page's tabs: Approvals and All keys only for a person with something to review,
 * decided once the answers are in (fake portal API, fake permissions).
 */
import { act, screen, waitFor } from '@testing-library/react';
import { portalApiKeyReadAllPermission } from '@devportal/plugin-portal-common';
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
import { PortalPage } from './PortalPage';

/** The tab link named `name`, if shown. */
const tab = (name: string) => screen.queryByRole('link', { name });

describe('PortalPage tabs (fake portal API, fake permissions)', () => {
  it('never shows Approvals or All keys to a person the portal refuses the product listing (erin)', async () => {
    const portal = fakePortalApi({
      listApiProducts: rejecting(
        await serverError(403, 'This needs the permission portal.apiproduct.list'),
      ),
    });
    await renderPortal(<PortalPage />, { apis: [[portalApiRef, portal], permissions()] });
    await waitFor(() => expect(portal.listApiProducts).toHaveBeenCalled());
    // The refusal has arrived and been rendered: the role is known now.
    await act(async () => {});
    expect(await screen.findByRole('link', { name: 'Policies' })).toBeInTheDocument();
    expect(tab('Approvals')).not.toBeInTheDocument();
    expect(tab('All keys')).not.toBeInTheDocument();
  });

  it('offers both tabs when the listing fails otherwise: the pages then show the server’s message', async () => {
    const portal = fakePortalApi({
      listApiProducts: rejecting(await serverError(503, 'The portal store is unavailable')),
    });
    await renderPortal(<PortalPage />, { apis: [[portalApiRef, portal], permissions()] });
    expect(await screen.findByRole('link', { name: 'Approvals' })).toBeInTheDocument();
    expect(tab('All keys')).toBeInTheDocument();
  });

  it('shows both tabs to an owner of a product, and All keys to an admin who may read every key', async () => {
    const owner = fakePortalApi({
      listApiProducts: jest.fn(async () => page([product({ name: 'toystore' })])),
    });
    const { unmount } = await renderPortal(<PortalPage />, {
      apis: [[portalApiRef, owner], permissions()],
    });
    expect(await screen.findByRole('link', { name: 'Approvals' })).toBeInTheDocument();
    expect(tab('All keys')).toBeInTheDocument();
    unmount();

    const consumer = fakePortalApi({ listApiProducts: jest.fn(async () => page([])) });
    await renderPortal(<PortalPage />, {
      apis: [[portalApiRef, consumer], permissions(portalApiKeyReadAllPermission)],
    });
    expect(await screen.findByRole('link', { name: 'All keys' })).toBeInTheDocument();
  });
});
