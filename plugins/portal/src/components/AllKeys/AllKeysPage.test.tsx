import { identityApiRef } from '@backstage/frontend-plugin-api';
import { mockApis } from '@backstage/frontend-test-utils';
import {
  portalApiKeyDeleteAllPermission,
  portalApiKeyReadAllPermission,
  portalApiKeyReadOwnPermission,
} from '@devportal/plugin-portal-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import { apiKey, fakePortalApi, page, permissions, product } from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { AllKeysPage } from './AllKeysPage';

const bob = mockApis.identity({
  userEntityRef: 'user:default/bob',
  ownershipEntityRefs: ['user:default/bob', 'group:default/payments-team'],
});

describe('AllKeysPage (fake portal API, fake permissions)', () => {
  it('lets an admin filter every key on the server and revoke one', async () => {
    const key = apiKey({
      name: 'k-1',
      product: 'toystore',
      phase: 'Approved',
      requester: 'user:default/dave',
    });
    const portal = fakePortalApi({
      listApiProducts: jest.fn(async () => page([])),
      listRequests: jest.fn(async () => page([key])),
      deleteRequest: jest.fn(async () => undefined),
    });
    await renderPortal(<AllKeysPage />, {
      apis: [
        [portalApiRef, portal],
        permissions(
          portalApiKeyReadOwnPermission,
          portalApiKeyReadAllPermission,
          portalApiKeyDeleteAllPermission,
        ),
      ],
    });
    const row = (await screen.findByText('k-1')).closest('[role="row"]') as HTMLElement;
    expect(portal.listRequests).toHaveBeenCalledWith({ limit: 20, continue: undefined });
    await userEvent.type(screen.getByRole('textbox', { name: /^Requested by/ }), 'dave');
    await waitFor(() =>
      expect(portal.listRequests).toHaveBeenLastCalledWith(
        expect.objectContaining({ requester: 'user:default/dave' }),
      ),
    );
    await userEvent.click(within(row).getByRole('button', { name: 'Revoke key k-1' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Requested by dave for toystore/toystore');
    await userEvent.type(
      within(dialog).getByRole('textbox', { name: /^Reason/ }),
      '  Left the company  ',
    );
    await userEvent.click(within(dialog).getByRole('button', { name: 'Revoke key' }));
    await waitFor(() =>
      expect(portal.deleteRequest).toHaveBeenCalledWith(expect.objectContaining({ name: 'k-1' }), {
        reason: 'Left the company',
      }),
    );
  });

  it("shows an owner their products' keys only, without revoke", async () => {
    const portal = fakePortalApi({
      listApiProducts: jest.fn(async () => page([product({ name: 'toystore' })])),
      listRequests: jest.fn(async () => page([apiKey({ name: 'k-2', product: 'toystore' })])),
    });
    await renderPortal(<AllKeysPage />, {
      apis: [
        [portalApiRef, portal],
        [identityApiRef, bob],
        permissions(portalApiKeyReadOwnPermission),
      ],
    });
    expect(await screen.findByText('k-2')).toBeInTheDocument();
    expect(portal.listRequests).toHaveBeenCalledWith(
      expect.objectContaining({ owner: 'user:default/bob,group:default/payments-team' }),
    );
    expect(screen.queryByRole('button', { name: /Revoke|Delete/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('textbox', { name: /^Product owner/ })).not.toBeInTheDocument();
  });

  it('tells a consumer, who owns no product, that there is nothing to oversee', async () => {
    const portal = fakePortalApi({ listApiProducts: jest.fn(async () => page([])) });
    await renderPortal(<AllKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    expect(await screen.findByText('No keys for you to oversee')).toBeInTheDocument();
    expect(portal.listRequests).not.toHaveBeenCalled();
  });
});
