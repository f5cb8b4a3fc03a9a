import { mockApis } from '@backstage/frontend-test-utils';
import { mcpBrokerUsageReadPermission } from '@devportal/plugin-mcp-broker-common';
import { catalogApiRef } from '@backstage/plugin-catalog-react';
import { catalogApiMock } from '@backstage/plugin-catalog-react/testUtils';
import {
  portalApiKeyApprovePermission,
  portalApiKeyCreatePermission,
  portalApiProductUpdateOwnPermission,
} from '@devportal/plugin-portal-common';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  mcpProduct,
  mcpServerEntity,
  page,
  pagesOf,
  permissions,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { ProductDetailPage } from '../ProductDetail/ProductDetailPage';

const at = {
  mountPath: '/portal/products/:namespace/:name',
  initialRouteEntries: ['/portal/products/mcp/example-tools'],
};
const alice = mockApis.identity({
  userEntityRef: 'user:default/alice',
  ownershipEntityRefs: ['user:default/alice'],
});
const bob = mockApis.identity({
  userEntityRef: 'user:default/bob',
  ownershipEntityRefs: ['user:default/bob', 'group:default/payments-team'],
});
/** The in-memory catalog of @backstage/catalog-client's test utilities (real filter semantics). */
const catalogWith = (...entities: ReturnType<typeof mcpServerEntity>[]) =>
  [catalogApiRef, catalogApiMock({ entities })] as const;

describe('ProductDetailPage for an MCP product (fake portal API, in-memory catalog)', () => {
  it("links the server's entity and lists what it offers and the plans' quotas", async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () =>
        mcpProduct({ name: 'example-tools', displayName: 'Example tools' }),
      ),
      listMyRequestsPages: jest.fn(() => pagesOf<never>([])),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, portal],
        catalogWith(mcpServerEntity('example'), mcpServerEntity('other')),
        permissions(portalApiKeyCreatePermission),
        alice,
      ],
    });
    expect(await screen.findByRole('link', { name: 'MCP server example' })).toHaveAttribute(
      'href',
      '/catalog/default/api/mcp-server-example',
    );
    const tools = screen.getByRole('list', { name: 'Tools of MCP server example' });
    expect(within(tools).getByText('example_deploy')).toBeInTheDocument();
    expect(within(tools).getByText('destructive')).toBeInTheDocument();
    expect(within(tools).getByText('read-only')).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Prompts of MCP server example' })).toHaveTextContent(
      'example_greeting',
    );
    const plans = screen.getByRole('region', { name: 'Plans' });
    expect(within(plans).getByRole('row', { name: /bronze/ })).toHaveTextContent(
      '5 tool calls per day (UTC)',
    );
    expect(within(plans).getByRole('row', { name: /gold/ })).toHaveTextContent(
      '10 calls of deploy* per minute',
    );
    expect(plans).not.toHaveTextContent('matches no tool now');
    expect(screen.queryByText(/route/)).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Request access' })).toBeInTheDocument();
    expect(
      screen.getByText('You have not requested access to this product yet'),
    ).toBeInTheDocument();
  });

  it('marks a tool glob that matches none of the tools the server lists now', async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () =>
        mcpProduct({
          name: 'example-tools',
          plans: [
            {
              tier: 'narrow',
              limits: { toolCalls: [{ calls: 3, per: 'hour', tools: ['echo', 'rollback_*'] }] },
            },
          ],
        }),
      ),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], catalogWith(mcpServerEntity('example')), permissions(), alice],
    });
    const row = await screen.findByRole('row', { name: /narrow/ });
    expect(await within(row).findByText(/rollback_\* matches no tool now/)).toBeInTheDocument();
    expect(row).not.toHaveTextContent('echo matches');
  });

  it('warns when the server is not in the catalog', async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => mcpProduct({ name: 'example-tools' })),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [[portalApiRef, portal], catalogWith(mcpServerEntity('other')), permissions(), alice],
    });
    expect(
      await screen.findByText('MCP server example is not in the catalog; new requests are refused'),
    ).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'MCP server example' })).not.toBeInTheDocument();
  });

  it('tells a person with a live grant that they have access, with links to their tools and usage', async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => mcpProduct({ name: 'example-tools' })),
      listMyRequestsPages: jest.fn(() =>
        pagesOf([
          apiKey({
            name: 'example-tools-a1',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
            planTier: 'bronze',
            expiresAt: '2999-01-01T00:00:00Z',
          }),
          apiKey({
            name: 'example-tools-a0',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
            planTier: 'gold',
            expiresAt: '2020-01-01T00:00:00Z',
          }),
        ]),
      ),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, portal],
        catalogWith(mcpServerEntity('example')),
        permissions(portalApiKeyCreatePermission),
        alice,
      ],
    });
    // The expired gold grant gives no access; the bronze one does.
    expect(
      await screen.findByText(/^You have access \(bronze, until Jan 1, 2999/),
    ).toBeInTheDocument();
    expect(screen.queryByText(/gold, until/)).not.toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Your tools on MCP tools' })).toHaveAttribute(
      'href',
      '/mcp?server=example',
    );
    expect(screen.getByRole('link', { name: 'My MCP usage' })).toHaveAttribute(
      'href',
      '/mcp/usage',
    );
  });

  it('shows its owners the people with access, and revokes one with a reason', async () => {
    const carolsGrant = apiKey({
      name: 'example-tools-c1',
      namespace: 'mcp',
      product: 'example-tools',
      phase: 'Approved',
      planTier: 'gold',
      requester: 'user:default/carol',
    });
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => mcpProduct({ name: 'example-tools' })),
      listRequests: jest
        .fn()
        .mockResolvedValueOnce(page([carolsGrant]))
        .mockResolvedValueOnce(page([])),
      revokeRequest: jest.fn(async () => undefined),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, portal],
        catalogWith(mcpServerEntity('example')),
        permissions(portalApiProductUpdateOwnPermission, portalApiKeyApprovePermission),
        bob,
      ],
    });
    const people = await screen.findByRole('region', { name: 'People with access' });
    expect(await within(people).findByRole('row', { name: /carol/ })).toHaveTextContent('gold');
    expect(portal.listRequests).toHaveBeenCalledWith(
      expect.objectContaining({ namespace: 'mcp', product: 'example-tools', status: 'Approved' }),
    );
    await userEvent.click(
      await within(people).findByRole('button', { name: 'Revoke access of carol' }),
    );
    const dialog = await screen.findByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText(/Reason/), 'project ended');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Revoke access' }));
    expect(portal.revokeRequest).toHaveBeenCalledWith(
      expect.objectContaining({ namespace: 'mcp', name: 'example-tools-c1' }),
      { reason: 'project ended' },
    );
    expect(await within(people).findByText('Nobody has access yet')).toBeInTheDocument();
  });

  it("links its owners to the server's usage where the broker would show it to them", async () => {
    const render = (...allowed: Parameters<typeof permissions>) =>
      renderPortal(<ProductDetailPage />, {
        ...at,
        apis: [
          [
            portalApiRef,
            fakePortalApi({
              getApiProduct: jest.fn(async () => mcpProduct({ name: 'example-tools' })),
              listRequests: jest.fn(async () => page([])),
            }),
          ],
          catalogWith(mcpServerEntity('example')),
          permissions(...allowed),
          bob,
        ],
      });
    const { unmount } = await render(
      portalApiProductUpdateOwnPermission,
      mcpBrokerUsageReadPermission,
    );
    expect(
      await screen.findByRole('link', { name: 'How much they use the server' }),
    ).toHaveAttribute('href', expect.stringMatching(/\/mcp\/servers\/example\/usage$/));
    unmount();

    await render(portalApiProductUpdateOwnPermission);
    await screen.findByRole('region', { name: 'People with access' });
    expect(
      screen.queryByRole('link', { name: 'How much they use the server' }),
    ).not.toBeInTheDocument();
  });

  it('offers no Revoke where the server would refuse it', async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => mcpProduct({ name: 'example-tools' })),
      listRequests: jest.fn(async () =>
        page([
          apiKey({
            name: 'example-tools-c1',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
            requester: 'user:default/carol',
          }),
        ]),
      ),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, portal],
        catalogWith(mcpServerEntity('example')),
        permissions(portalApiProductUpdateOwnPermission),
        bob,
      ],
    });
    const people = await screen.findByRole('region', { name: 'People with access' });
    await within(people).findByRole('row', { name: /carol/ });
    expect(within(people).queryByRole('button', { name: /Revoke/ })).not.toBeInTheDocument();
  });

  it("edits the plans in the edit dialog with creation's plan editor, sending them only when changed", async () => {
    const saved = mcpProduct({ name: 'example-tools', displayName: 'Example tools' });
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => saved),
      listRequests: jest.fn(async () => page([])),
      updateApiProduct: jest.fn(async () => saved),
    });
    await renderPortal(<ProductDetailPage />, {
      ...at,
      apis: [
        [portalApiRef, portal],
        catalogWith(mcpServerEntity('example')),
        permissions(portalApiProductUpdateOwnPermission),
        bob,
      ],
    });
    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    let dialog = await screen.findByRole('dialog', { name: 'Edit Example tools' });
    expect(within(dialog).getByLabelText(/Tier of plan 1/)).toHaveValue('bronze');
    expect(within(dialog).getByLabelText(/Tools of plan 2, quota 2/)).toHaveValue('deploy*');
    // The server's own tool names are suggested, as on creation.
    expect(await within(dialog).findAllByText(/Its tools: echo, deploy/)).toHaveLength(3);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(portal.updateApiProduct.mock.calls[0][1].spec).not.toHaveProperty('plans');

    await userEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    dialog = await screen.findByRole('dialog', { name: 'Edit Example tools' });
    const calls = within(dialog).getByLabelText(/Calls of plan 1, quota 1/);
    await userEvent.clear(calls);
    expect(within(dialog).getByRole('button', { name: 'Save' })).toBeDisabled();
    await userEvent.type(calls, '7');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(portal.updateApiProduct.mock.calls[1][1].spec?.plans).toEqual([
      {
        tier: 'bronze',
        description: 'To try things out',
        limits: { toolCalls: [{ calls: 7, per: 'day' }] },
      },
      {
        tier: 'gold',
        limits: {
          toolCalls: [
            { calls: 100, per: 'day' },
            { calls: 10, per: 'minute', tools: ['deploy*'] },
          ],
        },
      },
    ]);
  });
});
