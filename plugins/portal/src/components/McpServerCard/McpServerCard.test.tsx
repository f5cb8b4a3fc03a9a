import { mcpBrokerUsageReadPermission } from '@devportal/plugin-mcp-broker-common';
import {
  portalApiKeyCreatePermission,
  portalApiProductCreatePermission,
} from '@devportal/plugin-portal-common';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  mcpProduct,
  mcpServerEntity,
  pagesOf,
  permissions,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { isMcpServerEntity, McpServerCard } from './McpServerCard';

const example = mcpServerEntity('example');
const exampleTools = mcpProduct({ name: 'example-tools', displayName: 'Example tools' });
const draft = mcpProduct({
  name: 'example-beta',
  displayName: 'Example beta',
  publishStatus: 'Draft',
});
const otherServers = mcpProduct({ name: 'other-tools', server: 'other' });

describe('McpServerCard (fake portal API, fake permissions)', () => {
  it("belongs on the broker's MCP server entities only", () => {
    expect(isMcpServerEntity(example)).toBe(true);
    expect(isMcpServerEntity({ ...example, kind: 'Component' })).toBe(false);
    expect(isMcpServerEntity({ ...example, spec: { ...example.spec, type: 'openapi' } })).toBe(
      false,
    );
    // An mcp-server entity of another source (e.g. an MCP registry) is not the broker's.
    expect(isMcpServerEntity({ ...example, metadata: { name: 'elsewhere' } })).toBe(false);
  });

  it('shows the owner, the offer, the products with their plans, your access and Request access', async () => {
    const portal = fakePortalApi({
      listApiProductsPages: jest.fn(() => pagesOf([exampleTools, otherServers], [draft])),
      listMyRequestsPages: jest.fn(() =>
        pagesOf([
          apiKey({
            name: 'alice-example',
            namespace: 'mcp',
            product: 'example-tools',
            phase: 'Approved',
            planTier: 'bronze',
          }),
        ]),
      ),
    });
    await renderPortal(<McpServerCard entity={example} />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyCreatePermission)],
    });
    expect(screen.getByRole('heading', { name: 'MCP server' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'group:default/payments-team' })).toHaveAttribute(
      'href',
      '/catalog/default/group/payments-team',
    );
    expect(screen.getByLabelText('What it offers')).toHaveTextContent(
      '2 tools · 1 prompt · 1 resource',
    );
    expect(screen.getByRole('link', { name: 'Open in MCP tools' })).toHaveAttribute(
      'href',
      '/mcp?server=example',
    );
    expect(screen.queryByRole('link', { name: 'Usage' })).not.toBeInTheDocument();

    const products = await screen.findByRole('region', { name: 'Products offering it' });
    expect(await within(products).findByRole('link', { name: 'Example tools' })).toHaveAttribute(
      'href',
      '/portal/products/mcp/example-tools',
    );
    // It asks the portal for this server's products only, never for every product.
    expect(portal.listApiProductsPages.mock.calls).toEqual([
      [{ targetKind: 'MCPServer', targetName: 'example' }],
    ]);
    expect(within(products).queryByText('Product other-tools')).not.toBeInTheDocument();
    const plans = within(products).getByRole('region', { name: 'Plans of Example tools' });
    expect(within(plans).getByRole('row', { name: /bronze/ })).toHaveTextContent(
      '5 tool calls per day (UTC)',
    );
    expect(await within(products).findByText('You have access (bronze)')).toBeInTheDocument();
    // The Draft (its owners see it) is marked and offers no request.
    expect(within(products).getByText('Draft: not offered yet')).toBeInTheDocument();
    expect(
      within(products).queryByRole('button', { name: 'Request access through Example beta' }),
    ).not.toBeInTheDocument();

    await userEvent.click(
      within(products).getByRole('button', { name: 'Request access through Example tools' }),
    );
    expect(
      await screen.findByRole('dialog', { name: 'Request access to Example tools' }),
    ).toBeVisible();
  });

  it('links owners to who uses the server', async () => {
    const portal = fakePortalApi({ listApiProductsPages: jest.fn(() => pagesOf([])) });
    await renderPortal(<McpServerCard entity={example} />, {
      apis: [[portalApiRef, portal], permissions(mcpBrokerUsageReadPermission)],
    });
    expect(await screen.findByRole('link', { name: 'Usage' })).toHaveAttribute(
      'href',
      '/mcp/servers/example/usage',
    );
  });

  it('shows plans but neither access nor Request access to people who may not request', async () => {
    const portal = fakePortalApi({ listApiProductsPages: jest.fn(() => pagesOf([exampleTools])) });
    await renderPortal(<McpServerCard entity={example} />, {
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(await screen.findByRole('region', { name: 'Plans of Example tools' })).toBeVisible();
    expect(screen.queryByRole('button', { name: /Request access/ })).not.toBeInTheDocument();
    expect(portal.listMyRequestsPages).not.toHaveBeenCalled();
  });

  it('says when no product offers it, and offers product makers to make one', async () => {
    const portal = fakePortalApi({ listApiProductsPages: jest.fn(() => pagesOf([otherServers])) });
    await renderPortal(<McpServerCard entity={example} portalBasePath="/apis" />, {
      apis: [[portalApiRef, portal], permissions(portalApiProductCreatePermission)],
    });
    expect(await screen.findByText('No product offers it yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Offer it as a product' })).toHaveAttribute(
      'href',
      '/apis/products/new?server=example',
    );
  });

  it("shows the server's message when the products cannot be listed, and names the permission on a 403", async () => {
    const failing = fakePortalApi();
    failing.listApiProductsPages.mockImplementation(() =>
      (async function* fail(): AsyncIterableIterator<never> {
        throw await serverError(503, 'the portal store is not reachable');
      })(),
    );
    const { unmount } = await renderPortal(<McpServerCard entity={example} />, {
      apis: [[portalApiRef, failing], permissions()],
    });
    expect(await screen.findByText(/the portal store is not reachable/)).toBeInTheDocument();
    unmount();

    const forbidden = fakePortalApi();
    forbidden.listApiProductsPages.mockImplementation(() =>
      (async function* fail(): AsyncIterableIterator<never> {
        throw await serverError(403, 'no');
      })(),
    );
    await renderPortal(<McpServerCard entity={example} />, {
      apis: [[portalApiRef, forbidden], permissions()],
    });
    expect(await screen.findByText(/portal\.apiproduct\.list/)).toBeInTheDocument();
  });

  it('shows a loading state until the products are known', async () => {
    const portal = fakePortalApi({
      listApiProductsPages: jest.fn(() =>
        (async function* never(): AsyncIterableIterator<never> {
          await new Promise(() => {});
        })(),
      ),
    });
    await renderPortal(<McpServerCard entity={example} />, {
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(screen.getByRole('status')).toHaveTextContent('Loading the products offering it');
  });
});
