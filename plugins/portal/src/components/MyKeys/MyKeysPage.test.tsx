import { portalApiKeyReadOwnPermission } from '@devportal/plugin-portal-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  mcpProduct,
  page,
  permissions,
  readsProducts,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { formatDateTime } from '../shared/format';
import { MyKeysPage } from './MyKeysPage';

const SECRET = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA';

/** The table row holding `text`. */
async function rowWith(text: string | RegExp): Promise<HTMLElement> {
  const cell = await screen.findByText(text);
  return cell.closest('[role="row"]') as HTMLElement;
}

/** Everything the browser keeps across page loads, as one string. */
function storedText(): string {
  const all: string[] = [];
  for (const storage of [window.localStorage, window.sessionStorage]) {
    for (let i = 0; i < storage.length; i++) {
      const key = storage.key(i)!;
      all.push(key, storage.getItem(key) ?? '');
    }
  }
  return all.join('\n') + document.cookie;
}

describe('MyKeysPage (fake portal API, fake permissions)', () => {
  it('lists the keys with phase, plan, review and reason, and the actions each phase allows', async () => {
    const portal = fakePortalApi({
      ...readsProducts(),
      listMyRequests: jest.fn(async () =>
        page([
          apiKey({ name: 'pending-1', product: 'toystore', phase: 'Pending' }),
          apiKey({
            name: 'rejected-1',
            product: 'toystore',
            phase: 'Rejected',
            reason: 'Use the silver plan',
          }),
          apiKey({ name: 'approved-1', product: 'toystore', phase: 'Approved' }),
        ]),
      ),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    const pending = await rowWith('toystore/pending-1');
    expect(within(pending).getByText('Pending')).toBeInTheDocument();
    expect(within(pending).getByRole('button', { name: 'Edit request pending-1' })).toBeVisible();
    expect(within(pending).getByRole('button', { name: 'Cancel request pending-1' })).toBeVisible();
    const rejected = await rowWith('toystore/rejected-1');
    expect(within(rejected).getByText('Use the silver plan')).toBeInTheDocument();
    expect(within(rejected).queryByRole('button', { name: /Reveal/ })).not.toBeInTheDocument();
    const approved = await rowWith('toystore/approved-1');
    expect(
      within(approved).getByRole('button', { name: 'Reveal secret of approved-1' }),
    ).toBeInTheDocument();
  });

  it('reveals the secret once after a warning, masked, and shows "revealed on" afterwards', async () => {
    let revealed = false;
    const portal = fakePortalApi({
      ...readsProducts(),
      listMyRequests: jest.fn(async () =>
        page([
          apiKey({
            name: 'approved-1',
            product: 'toystore',
            phase: 'Approved',
            secretRevealed: revealed,
            secretRevealedAt: revealed ? '2026-03-04T12:00:00Z' : undefined,
          }),
        ]),
      ),
      revealApiKeySecret: jest.fn(async () => {
        revealed = true;
        return { apiKey: SECRET };
      }),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    await userEvent.click(
      await screen.findByRole('button', { name: 'Reveal secret of approved-1' }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('The secret can be shown only once')).toBeInTheDocument();
    expect(portal.revealApiKeySecret).not.toHaveBeenCalled();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Reveal secret' }));
    const field = await within(dialog).findByLabelText('API key secret');
    expect(field).toHaveValue(SECRET);
    expect(field).toHaveAttribute('type', 'password');
    expect(portal.revealApiKeySecret).toHaveBeenCalledTimes(1);
    expect(storedText()).not.toContain(SECRET);
    expect(window.location.href).not.toContain(SECRET);

    await userEvent.click(within(dialog).getByRole('button', { name: 'I have stored it, close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(document.body.innerHTML).not.toContain(SECRET);
    const row = await rowWith(`Revealed on ${formatDateTime('2026-03-04T12:00:00Z')}`);
    expect(within(row).queryByRole('button', { name: /Reveal secret/ })).not.toBeInTheDocument();
  });

  it('explains a secret revealed elsewhere first (409) instead of failing', async () => {
    const conflict = await serverError(409, 'secret already revealed');
    const portal = fakePortalApi({
      ...readsProducts(),
      listMyRequests: jest.fn(async () =>
        page([apiKey({ name: 'approved-1', product: 'toystore', phase: 'Approved' })]),
      ),
      revealApiKeySecret: rejecting(conflict),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    await userEvent.click(
      await screen.findByRole('button', { name: 'Reveal secret of approved-1' }),
    );
    await userEvent.click(await screen.findByRole('button', { name: 'Reveal secret' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('This secret was already revealed');
    expect(alert).not.toHaveTextContent('could not be revealed');
  });

  it('cancels a Pending request after a confirmation', async () => {
    const portal = fakePortalApi({
      ...readsProducts(),
      listMyRequests: jest.fn(async () =>
        page([apiKey({ name: 'pending-1', product: 'toystore', phase: 'Pending' })]),
      ),
      deleteRequest: jest.fn(async () => undefined),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Cancel request pending-1' }));
    const dialog = await screen.findByRole('dialog');
    // The requester's own key: nobody to tell a reason to.
    expect(within(dialog).queryByRole('textbox', { name: /^Reason/ })).toBeNull();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel request' }));
    await waitFor(() =>
      expect(portal.deleteRequest).toHaveBeenCalledWith(
        expect.objectContaining({ namespace: 'toystore', name: 'pending-1' }),
        {},
      ),
    );
    await waitFor(() => expect(portal.listMyRequests).toHaveBeenCalledTimes(2));
  });

  it('says so when there is no key', async () => {
    const portal = fakePortalApi({
      ...readsProducts(),
      listMyRequests: jest.fn(async () => page([])),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    expect(await screen.findByText('You have no API keys yet')).toBeInTheDocument();
  });

  it("shows the server's message when the list fails, and the forbidden state without the permission", async () => {
    const failure = await serverError(503, 'The portal store is unreachable');
    const failing = fakePortalApi({
      listMyRequests: rejecting(failure),
    });
    const view = await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, failing], permissions(portalApiKeyReadOwnPermission)],
    });
    expect(await screen.findByRole('alert')).toHaveTextContent('The portal store is unreachable');
    view.unmount();

    const unused = fakePortalApi();
    await renderPortal(<MyKeysPage />, { apis: [[portalApiRef, unused], permissions()] });
    expect(await screen.findByText('You may not see API keys')).toBeInTheDocument();
    expect(unused.listMyRequests).not.toHaveBeenCalled();
  });

  it('shows access requests of MCP products as "MCP access": no reveal, links while live, "Expired" after', async () => {
    const portal = fakePortalApi({
      ...readsProducts(mcpProduct({ name: 'example-tools', server: 'example' })),
      listMyRequests: jest.fn(async () =>
        page([
          apiKey({
            name: 'example-tools-live',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
            planTier: 'bronze',
          }),
          apiKey({
            name: 'example-tools-old',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
            planTier: 'gold',
            expiresAt: '2026-01-01T00:00:00Z',
          }),
          apiKey({ name: 'approved-1', product: 'toystore', phase: 'Approved' }),
        ]),
      ),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    const live = await rowWith('mcp/example-tools-live');
    expect(await within(live).findByText('MCP access')).toBeInTheDocument();
    expect(within(live).getByText('MCP server "example"')).toBeInTheDocument();
    expect(within(live).queryByRole('button', { name: /Reveal secret/ })).not.toBeInTheDocument();
    expect(within(live).getByRole('link', { name: 'MCP tools' })).toHaveAttribute(
      'href',
      '/mcp?server=example',
    );
    expect(within(live).getByRole('link', { name: 'My MCP usage' })).toHaveAttribute(
      'href',
      '/mcp/usage',
    );
    expect(within(live).queryByText('Expired')).not.toBeInTheDocument();

    const old = await rowWith('mcp/example-tools-old');
    expect(within(old).getByText('Expired')).toBeInTheDocument();
    expect(within(old).getByText(/^Expired on Jan 1, 2026/)).toBeInTheDocument();
    expect(within(old).queryByRole('link', { name: 'MCP tools' })).not.toBeInTheDocument();

    const key = await rowWith('toystore/approved-1');
    expect(within(key).getByText('API key')).toBeInTheDocument();
    expect(within(key).getByRole('button', { name: 'Reveal secret of approved-1' })).toBeVisible();
    // Each product is read once, however many of its keys the page holds.
    expect(portal.getApiProduct).toHaveBeenCalledTimes(2);
  });

  it('says what cancelling MCP access does: no secret, the tools go', async () => {
    const portal = fakePortalApi({
      ...readsProducts(mcpProduct({ name: 'example-tools' })),
      listMyRequests: jest.fn(async () =>
        page([
          apiKey({
            name: 'example-tools-live',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
          }),
        ]),
      ),
    });
    await renderPortal(<MyKeysPage />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyReadOwnPermission)],
    });
    const live = await rowWith('mcp/example-tools-live');
    await userEvent.click(
      await within(live).findByRole('button', { name: 'Revoke key example-tools-live' }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('the tools disappear from your MCP clients');
    expect(dialog).not.toHaveTextContent('secret');
  });
});
