import { mockApis } from '@backstage/frontend-test-utils';
import { catalogApiRef } from '@backstage/plugin-catalog-react';
import { catalogApiMock } from '@backstage/plugin-catalog-react/testUtils';
import { portalApiProductCreatePermission } from '@devportal/plugin-portal-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  fakePortalApi,
  mcpProduct,
  mcpServerEntity,
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

  it('creates an MCP product on a server the person owns, with plans of quota rows', async () => {
    const portal = fakePortalApi({
      createApiProduct: jest.fn(async body =>
        mcpProduct({ name: body.metadata.name, namespace: body.metadata.namespace }),
      ),
    });
    await renderPortal(<CreateProductPage />, {
      initialRouteEntries: ['/portal/products/new'],
      apis: [
        [portalApiRef, portal],
        [
          catalogApiRef,
          catalogApiMock({
            entities: [
              mcpServerEntity('example', 'group:default/payments-team'),
              mcpServerEntity('jira', 'group:default/other-team'),
            ],
          }),
        ],
        permissions(portalApiProductCreatePermission),
        bob,
      ],
    });
    await userEvent.click(await screen.findByRole('radio', { name: /An MCP server or endpoint/ }));
    await userEvent.click(await screen.findByRole('button', { name: /MCP server/ }));
    // bob's group owns example, not jira.
    expect(await screen.findByRole('option', { name: /MCP server example/ })).toBeInTheDocument();
    expect(screen.queryByRole('option', { name: /MCP server jira/ })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('option', { name: /MCP server example/ }));
    expect(
      await screen.findByText(
        /Owner: group:default\/payments-team \(an MCP product is always owned/,
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('textbox', { name: 'Tools of plan 1, quota 1' }),
    ).toHaveAccessibleDescription(/Its tools: echo, deploy/);
    await userEvent.type(screen.getByRole('textbox', { name: /^Namespace/ }), 'mcp');
    await userEvent.type(screen.getByRole('textbox', { name: /^Name(?!space)/ }), 'example-tools');
    await userEvent.type(screen.getByRole('textbox', { name: /Display name/ }), 'Example tools');
    const calls = screen.getByRole('textbox', { name: /Calls of plan 1, quota 1/ });
    await userEvent.clear(calls);
    await userEvent.type(calls, '5');
    await userEvent.click(screen.getByRole('button', { name: 'Add a plan' }));
    await userEvent.type(screen.getByRole('textbox', { name: /Tier of plan 2/ }), 'gold');
    await userEvent.click(screen.getByRole('button', { name: 'Add a quota to plan 2' }));
    const row = screen.getByRole('textbox', { name: /Calls of plan 2, quota 2/ });
    await userEvent.clear(row);
    await userEvent.type(row, '10');
    await userEvent.click(screen.getByRole('button', { name: /Window of plan 2, quota 2/ }));
    await userEvent.click(await screen.findByRole('option', { name: 'per minute' }));
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Tools of plan 2, quota 2' }),
      'deploy',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Create product' }));
    await waitFor(() => expect(portal.createApiProduct).toHaveBeenCalled());
    const body = portal.createApiProduct.mock.calls[0][0];
    expect(body.metadata).toEqual({ namespace: 'mcp', name: 'example-tools' });
    expect(body.spec).toMatchObject({
      displayName: 'Example tools',
      targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' },
      plans: [
        { tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' }] } },
        {
          tier: 'gold',
          limits: {
            toolCalls: [
              { calls: 100, per: 'day' },
              { calls: 10, per: 'minute', tools: ['deploy'] },
            ],
          },
        },
      ],
    });
  });

  it('keeps Create disabled while a quota is not a whole number', async () => {
    const portal = fakePortalApi();
    await renderPortal(<CreateProductPage />, {
      initialRouteEntries: ['/portal/products/new?server=example'],
      apis: [
        [portalApiRef, portal],
        [catalogApiRef, catalogApiMock({ entities: [mcpServerEntity('example')] })],
        permissions(portalApiProductCreatePermission),
        bob,
      ],
    });
    await userEvent.type(await screen.findByRole('textbox', { name: /^Namespace/ }), 'mcp');
    await userEvent.type(screen.getByRole('textbox', { name: /^Name(?!space)/ }), 'example-tools');
    await userEvent.type(screen.getByRole('textbox', { name: /Display name/ }), 'Example tools');
    const create = screen.getByRole('button', { name: 'Create product' });
    await waitFor(() => expect(create).toBeEnabled());
    const calls = screen.getByRole('textbox', { name: /Calls of plan 1, quota 1/ });
    await userEvent.clear(calls);
    await userEvent.type(calls, '2.5');
    expect(create).toBeDisabled();
    expect(
      within(calls.closest('.bui-TextField') ?? document.body).getByText(/A whole number/),
    ).toBeInTheDocument();
  });
});
