import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  pagesOf,
  permissions,
  product,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { DeleteProductDialog } from './DeleteProductDialog';

describe('DeleteProductDialog (fake portal API)', () => {
  it("counts the product's keys over every page and deletes only once its name is typed", async () => {
    const onDeleted = jest.fn();
    const portal = fakePortalApi({
      listRequestsPages: jest.fn(() =>
        pagesOf(
          [apiKey({ name: 'k1', product: 'toystore' }), apiKey({ name: 'x', product: 'other' })],
          [apiKey({ name: 'k2', product: 'toystore', phase: 'Approved' })],
        ),
      ),
      deleteApiProduct: jest.fn(async () => undefined),
    });
    await renderPortal(
      <DeleteProductDialog
        product={product({ name: 'toystore', displayName: 'Toystore' })}
        isOpen
        onOpenChange={() => {}}
        onDeleted={onDeleted}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    expect(
      await screen.findByText(
        '2 API keys of this product will be deleted with it, and their secrets revoked.',
      ),
    ).toBeInTheDocument();
    expect(portal.listRequestsPages).toHaveBeenCalledWith({ namespace: 'toystore' });
    const remove = screen.getByRole('button', { name: 'Delete product' });
    expect(remove).toBeDisabled();
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Type toystore to confirm' }),
      'toystor',
    );
    expect(remove).toBeDisabled();
    await userEvent.type(screen.getByRole('textbox', { name: 'Type toystore to confirm' }), 'e');
    await userEvent.click(remove);
    await waitFor(() => expect(onDeleted).toHaveBeenCalled());
    expect(portal.deleteApiProduct).toHaveBeenCalledWith(
      expect.objectContaining({ namespace: 'toystore', name: 'toystore' }),
    );
  });

  it("keeps the dialog with the server's message when the delete fails", async () => {
    const failure = await serverError(503, 'Deleting the keys of toystore/toystore failed; retry');
    const portal = fakePortalApi({
      listRequestsPages: jest.fn(() => pagesOf([])),
      deleteApiProduct: rejecting(failure),
    });
    await renderPortal(
      <DeleteProductDialog
        product={product({ name: 'toystore', displayName: 'Toystore' })}
        isOpen
        onOpenChange={() => {}}
        onDeleted={() => {}}
      />,
      { apis: [[portalApiRef, portal], permissions()] },
    );
    expect(await screen.findByText('This product has no API keys.')).toBeInTheDocument();
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Type toystore to confirm' }),
      'toystore',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Delete product' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Deleting the keys of toystore/toystore failed; retry',
    );
  });
});
