import { mockApis } from '@backstage/frontend-test-utils';
import { identityApiRef } from '@backstage/frontend-plugin-api';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  portalApiKeyApprovePermission,
  portalApiKeyReadOwnPermission,
  type ApiProduct,
  type BulkReviewRequest,
} from '@devportal/plugin-portal-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  mcpProduct,
  page,
  permissions,
  product,
  readsProducts,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { ApprovalsPage } from './ApprovalsPage';

/** bob: reads his own requests and may approve only those of toystore's products. */
const bobsPermissions = mockApis.permission({
  authorize: request => {
    if (request.permission.name === portalApiKeyReadOwnPermission.name)
      return AuthorizeResult.ALLOW;
    if (request.permission.name === portalApiKeyApprovePermission.name) {
      return (request as { resourceRef?: string }).resourceRef?.startsWith('toystore/')
        ? AuthorizeResult.ALLOW
        : AuthorizeResult.DENY;
    }
    return AuthorizeResult.DENY;
  },
});

/**
 * bob's product listing: `/apiproducts?owner=<his refs>` finds one (he owns a product); the
 * queue reads each request's product (HTTPRoute ones unless named).
 */
const ownsAProduct = (...known: ApiProduct[]) => ({
  listApiProducts: jest.fn(async () => page([product({ name: 'toystore' })])),
  ...readsProducts(...known),
});

/** The table row holding `text`. */
async function rowWith(text: string): Promise<HTMLElement> {
  return (await screen.findByText(text)).closest('[role="row"]') as HTMLElement;
}

describe('ApprovalsPage (fake portal API, fake permissions)', () => {
  it('lists only the Pending requests the person may approve, asked per request', async () => {
    const portal = fakePortalApi({
      ...ownsAProduct(),
      listRequests: jest.fn(async () =>
        page([
          apiKey({ name: 'a-1', product: 'toystore', useCase: 'Nightly sync' }),
          apiKey({ name: 'b-1', namespace: 'elsewhere', product: 'other', useCase: 'Not his' }),
        ]),
      ),
    });
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], bobsPermissions] });
    expect(await screen.findByText('Nightly sync')).toBeInTheDocument();
    expect(screen.queryByText('Not his')).not.toBeInTheDocument();
    expect(portal.listRequests).toHaveBeenCalledWith({
      status: 'Pending',
      limit: 20,
      continue: undefined,
    });
  });

  it('approves several in one call with one reason and shows each request’s result', async () => {
    const conflict = {
      name: 'ConflictError',
      message: 'request is Approved, not Pending',
      statusCode: 409,
    };
    const portal = fakePortalApi({
      ...ownsAProduct(),
      listRequests: jest.fn(async () =>
        page([
          apiKey({ name: 'a-1', product: 'toystore', useCase: 'First' }),
          apiKey({ name: 'a-2', product: 'toystore', useCase: 'Second' }),
          apiKey({ name: 'a-3', product: 'toystore', useCase: 'Third' }),
        ]),
      ),
      bulkApproveRequests: jest.fn(async (body: BulkReviewRequest) => ({
        results: body.requests.map(ref =>
          ref.name === 'a-2'
            ? { ...ref, success: false as const, error: conflict }
            : {
                ...ref,
                success: true as const,
                apiKey: apiKey({ name: ref.name, product: 'toystore', phase: 'Approved' }),
              },
        ),
      })),
    });
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], bobsPermissions] });
    for (const useCase of ['First', 'Second']) {
      const row = await rowWith(useCase);
      await userEvent.click(within(row).getByRole('checkbox'));
    }
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Reason (optional)' }),
      'Welcome aboard',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Approve selected (2)' }));
    expect(await screen.findByText('1 of 2 approved')).toBeInTheDocument();
    const results = screen.getByRole('grid', { name: 'Results of the bulk decision' });
    expect(within(results).getByText('toystore/a-1: approved')).toBeInTheDocument();
    expect(
      within(results).getByText('toystore/a-2: not approved — request is Approved, not Pending'),
    ).toBeInTheDocument();
    expect(portal.bulkApproveRequests).toHaveBeenCalledWith({
      requests: [
        { namespace: 'toystore', name: 'a-1' },
        { namespace: 'toystore', name: 'a-2' },
      ],
      reason: 'Welcome aboard',
    });
    await waitFor(() => expect(portal.listRequests).toHaveBeenCalledTimes(2));
  });

  it('rejects in bulk, and shows the server message when the whole call is refused', async () => {
    const refusal = await serverError(400, 'requests: at most 100 items');
    const portal = fakePortalApi({
      ...ownsAProduct(),
      listRequests: jest.fn(async () =>
        page([apiKey({ name: 'a-1', product: 'toystore', useCase: 'Only' })]),
      ),
      bulkRejectRequests: rejecting(refusal),
    });
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], bobsPermissions] });
    await userEvent.click(within(await rowWith('Only')).getByRole('checkbox'));
    await userEvent.click(screen.getByRole('button', { name: 'Reject selected (1)' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('requests: at most 100 items');
  });

  it('filters by namespace on the server', async () => {
    const portal = fakePortalApi({
      ...ownsAProduct(),
      listRequests: jest.fn(async () => page([])),
    });
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], bobsPermissions] });
    expect(await screen.findByText('No pending requests to decide')).toBeInTheDocument();
    await userEvent.type(screen.getByRole('textbox', { name: 'Namespace' }), 'toystore');
    await waitFor(() =>
      expect(portal.listRequests).toHaveBeenLastCalledWith(
        expect.objectContaining({ status: 'Pending', namespace: 'toystore' }),
      ),
    );
  });

  it('tells a consumer, who owns no product, that there is nothing to approve instead of the queue', async () => {
    const portal = fakePortalApi({ listApiProducts: jest.fn(async () => page([])) });
    const alice = mockApis.identity({
      userEntityRef: 'user:default/alice',
      ownershipEntityRefs: ['user:default/alice'],
    });
    await renderPortal(<ApprovalsPage />, {
      apis: [[portalApiRef, portal], [identityApiRef, alice], bobsPermissions],
    });
    expect(await screen.findByText('Nothing for you to approve')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to My keys' })).toBeInTheDocument();
    expect(portal.listApiProducts).toHaveBeenCalledWith({ owner: 'user:default/alice', limit: 1 });
    expect(portal.listRequests).not.toHaveBeenCalled();
    expect(screen.queryByRole('button', { name: /Approve selected/ })).not.toBeInTheDocument();
  });

  it('draws "Approve selected" like the other disabled button while nothing is selected', async () => {
    const portal = fakePortalApi({
      ...ownsAProduct(),
      listRequests: jest.fn(async () => page([apiKey({ name: 'a-1', product: 'toystore' })])),
    });
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], bobsPermissions] });
    const approve = await screen.findByRole('button', { name: 'Approve selected (0)' });
    const reject = screen.getByRole('button', { name: 'Reject selected (0)' });
    expect(approve).toBeDisabled();
    expect(approve.getAttribute('data-variant')).toBe(reject.getAttribute('data-variant'));
    await userEvent.click(within(await rowWith('a-1')).getByRole('checkbox'));
    const enabled = screen.getByRole('button', { name: 'Approve selected (1)' });
    expect(enabled).toBeEnabled();
    expect(enabled.getAttribute('data-variant')).toBe('primary');
  });

  it('shows the forbidden state to people who may not read requests', async () => {
    const portal = fakePortalApi();
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], permissions()] });
    expect(await screen.findByText('You may not see key requests')).toBeInTheDocument();
    expect(portal.listRequests).not.toHaveBeenCalled();
  });

  it('queues MCP access with API keys: a Kind column and filter, the server named, the quotas shown', async () => {
    const portal = fakePortalApi({
      ...ownsAProduct(mcpProduct({ name: 'example-tools', namespace: 'toystore' })),
      listRequests: jest.fn(async () =>
        page([
          apiKey({ name: 'a-1', product: 'toystore', useCase: 'Nightly sync' }),
          apiKey({
            name: 'm-1',
            product: 'example-tools',
            planTier: 'bronze',
            useCase: 'Try the tools',
          }),
        ]),
      ),
    });
    await renderPortal(<ApprovalsPage />, { apis: [[portalApiRef, portal], bobsPermissions] });
    const access = await rowWith('Try the tools');
    expect(within(access).getByText('MCP access')).toBeInTheDocument();
    expect(within(access).getByText('toystore · MCP server "example"')).toBeInTheDocument();
    expect(within(access).getByText('5 tool calls per day (UTC)')).toBeInTheDocument();
    expect(within(await rowWith('Nightly sync')).getByText('API key')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: /Kind/ }));
    await userEvent.click(await screen.findByRole('option', { name: 'MCP access' }));
    await waitFor(() => expect(screen.queryByText('Nightly sync')).not.toBeInTheDocument());
    expect(screen.getByText('Try the tools')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: /Kind/ }));
    await userEvent.click(await screen.findByRole('option', { name: 'API key' }));
    expect(await screen.findByText('Nightly sync')).toBeInTheDocument();
    expect(screen.queryByText('Try the tools')).not.toBeInTheDocument();
    // The products were read once, not again for each filter.
    expect(portal.getApiProduct).toHaveBeenCalledTimes(2);
  });
});
