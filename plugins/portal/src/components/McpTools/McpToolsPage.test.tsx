import {
  mcpBrokerSessionCreatePermission,
  mcpBrokerStatusReadPermission,
} from '@devportal/plugin-mcp-broker-common';
import { notificationsApiRef } from '@backstage/plugin-notifications';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { act, screen, waitFor, within } from '@testing-library/react';
import type { ApiProduct } from '@devportal/plugin-portal-common';
import { mcpBrokerApiRef, type McpBrokerApi } from '../../apis/McpBrokerApi';
import { portalApiRef } from '../../apis/PortalApi';
import { permissions, rejecting, serverError } from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { catalogAndProducts, noOtherServers } from '../../__testUtils__/mcpCatalog';
import { mcpProduct, mcpServerEntity } from '../../__testUtils__/fakes';
import { fakeNotificationsApi, FakeSignalApi } from '../../__testUtils__/signals';
import { McpToolsPage } from './McpToolsPage';

function fakeBroker(overrides: Partial<McpBrokerApi> = {}): jest.Mocked<McpBrokerApi> {
  return {
    getEndpointUrl: jest.fn(async () => 'http://localhost:7007/api/mcp-broker/mcp'),
    getCatalog: jest.fn(async () => ({
      servers: [
        {
          server: 'example',
          tools: [
            {
              name: 'example_echo',
              description: 'Echoes its input',
              annotations: { readOnlyHint: true },
            },
          ],
          prompts: [{ name: 'example_greeting', description: 'A greeting' }],
          resources: [{ uri: 'example://readme', name: 'readme' }],
          resourceTemplates: [],
        },
      ],
    })),
    getStatus: jest.fn(async () => ({
      backends: [
        {
          name: 'example',
          url: 'http://127.0.0.1:3101/mcp',
          state: 'backing-off',
          era: 'legacy',
          protocolVersion: '2025-11-25',
          lastError: 'backend down: ECONNREFUSED',
        },
      ],
    })),
    ...overrides,
  } as jest.Mocked<McpBrokerApi>;
}

describe('McpToolsPage (fake broker API, fake permissions)', () => {
  it('lists the curated endpoints the person may use, each with its URL, instructions and client snippet', async () => {
    const broker = fakeBroker({
      getCatalog: jest.fn(async () => ({
        servers: [
          {
            server: 'example',
            tools: [{ name: 'example_echo' }, { name: 'example_count' }],
            prompts: [],
            resources: [],
            resourceTemplates: [],
          },
        ],
        endpoints: [
          { name: 'triage', title: 'Incident triage', instructions: 'Read-only tools.', tools: 2 },
          { name: 'echo-only', title: 'echo-only', tools: 1 },
        ],
      })),
    });
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(await screen.findByRole('heading', { name: 'Curated endpoints' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Incident triage' })).toBeInTheDocument();
    expect(screen.getByText('2 tools for you at', { exact: false })).toHaveTextContent(
      'http://localhost:7007/api/mcp-broker/endpoints/triage/mcp',
    );
    expect(screen.getByLabelText('Instructions of triage')).toHaveTextContent('Read-only tools.');
    expect(
      JSON.parse(screen.getByLabelText('MCP client configuration for echo-only').textContent!),
    ).toEqual({
      servers: {
        'echo-only': {
          type: 'http',
          url: 'http://localhost:7007/api/mcp-broker/endpoints/echo-only/mcp',
        },
      },
    });
    expect(screen.queryByLabelText('Instructions of echo-only')).not.toBeInTheDocument();
  });

  it('shows no endpoints section when the person may use none', async () => {
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, fakeBroker()],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    await screen.findByRole('list', { name: 'Tools of example' });
    expect(screen.queryByRole('heading', { name: 'Curated endpoints' })).not.toBeInTheDocument();
  });

  it("shows the person's tools, prompts and resources per server and how to connect an IDE", async () => {
    const broker = fakeBroker();
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    const tools = await screen.findByRole('list', { name: 'Tools of example' });
    expect(within(tools).getByText('example_echo')).toBeInTheDocument();
    expect(within(tools).getByText('read-only')).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Prompts of example' })).toHaveTextContent(
      'example_greeting',
    );
    expect(screen.getByRole('list', { name: 'Resources of example' })).toHaveTextContent(
      'example://readme',
    );
    expect(
      screen.getAllByText(/http:\/\/localhost:7007\/api\/mcp-broker\/mcp/).length,
    ).toBeGreaterThan(0);
    expect(screen.queryByText('Backend status')).not.toBeInTheDocument();
    expect(broker.getStatus).not.toHaveBeenCalled();
    const usage = screen.getByRole('navigation', { name: 'MCP usage' });
    expect(within(usage).getByRole('link', { name: 'My MCP usage' })).toHaveAttribute(
      'href',
      '/mcp/usage',
    );
    expect(within(usage).getByRole('link', { name: "My servers' usage" })).toHaveAttribute(
      'href',
      '/mcp/servers',
    );
  });

  it('renders Markdown descriptions whole and safely: no raw syntax, no injected HTML', async () => {
    const description = [
      '## Catalog Model',
      '',
      'Reads an entity by its `ref` and **never** writes.',
      '',
      '<img src="x" onerror="window.injected = true"><script>window.injected = true</script>',
      '[bad link](javascript:window.injected=true)',
    ].join('\n');
    const broker = fakeBroker({
      getCatalog: jest.fn(async () => ({
        servers: [
          {
            server: 'backstage',
            tools: [{ name: 'catalog_get', description }],
            prompts: [{ name: 'explain', description: 'Explains `code`' }],
            resources: [],
            resourceTemplates: [],
          },
        ],
      })),
    });
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    const tools = await screen.findByRole('list', { name: 'Tools of backstage' });
    expect(within(tools).getByText('Catalog Model')).toBeInTheDocument();
    expect(within(tools).getByText('ref').tagName).toBe('CODE');
    expect(within(tools).getByText('never').tagName).toBe('STRONG');
    expect(tools.textContent).not.toMatch(/##|`/);
    expect(tools.querySelector('script, [onerror]')).toBeNull();
    expect(tools.querySelector('a[href^="javascript"]')).toBeNull();
    expect((window as { injected?: boolean }).injected).toBeUndefined();
    const prompts = screen.getByRole('list', { name: 'Prompts of backstage' });
    expect(within(prompts).getByText('code').tagName).toBe('CODE');
  });

  it('adds each backend’s state, era and last error for holders of mcp-broker.status.read', async () => {
    const broker = fakeBroker();
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission, mcpBrokerStatusReadPermission),
      ],
    });
    const status = await screen.findByRole('region', { name: 'Backend status' });
    expect(await within(status).findByText('backing-off')).toBeInTheDocument();
    expect(within(status).getByText('legacy')).toBeInTheDocument();
    expect(within(status).getByText('backend down: ECONNREFUSED')).toBeInTheDocument();
  });

  it('says so when no server offers the person anything', async () => {
    const broker = fakeBroker({ getCatalog: jest.fn(async () => ({ servers: [] })) });
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(await screen.findByText('No MCP tools for you yet')).toBeInTheDocument();
  });

  it("shows the broker's message when the catalog cannot be read", async () => {
    const failure = await serverError(503, 'The MCP broker cannot reach the permission backend');
    const broker = fakeBroker({
      getCatalog: rejecting(failure),
    });
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The MCP broker cannot reach the permission backend',
    );
  });

  it('shows the forbidden state without mcp-broker.session.create', async () => {
    const broker = fakeBroker();
    await renderPortal(<McpToolsPage />, {
      apis: [...noOtherServers(), [mcpBrokerApiRef, broker], permissions()],
    });
    expect(await screen.findByText('You may not see the MCP broker')).toBeInTheDocument();
    expect(broker.getCatalog).not.toHaveBeenCalled();
  });

  it('offers "Request access" for catalog servers the person holds nothing of, through their products', async () => {
    const broker = fakeBroker();
    const apis = catalogAndProducts(
      [mcpServerEntity('example'), mcpServerEntity('jira'), mcpServerEntity('deploybot')],
      [
        mcpProduct({ name: 'jira-tools', server: 'jira', displayName: 'Jira tools' }),
        mcpProduct({ name: 'example-tools', server: 'example', displayName: 'Example tools' }),
      ],
    );
    await renderPortal(<McpToolsPage />, {
      apis: [...apis, [mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    const more = await screen.findByRole('list', { name: 'More MCP servers' });
    // example's tools are already the person's; jira and deploybot are not.
    expect(within(more).queryByText('example')).not.toBeInTheDocument();
    expect(
      within(more).getByRole('link', { name: 'Request access to jira through Jira tools' }),
    ).toHaveAttribute('href', '/portal/products/mcp/jira-tools');
    expect(within(more).getByRole('link', { name: 'deploybot' })).toHaveAttribute(
      'href',
      '/catalog/default/api/mcp-server-deploybot',
    );
    expect(within(more).getByText('No product offers it yet')).toBeInTheDocument();
    // It asks the portal for the products on MCP servers, not for every product.
    const [, [, portal]] = apis;
    expect(portal.listApiProductsPages).toHaveBeenCalledWith({ targetKind: 'MCPServer' });
    expect(portal.listApiProductsPages).not.toHaveBeenCalledWith();
  });
});

describe('McpToolsPage: ?server= and live updates (fake broker, fake signal and notifications APIs)', () => {
  const scrollIntoView = jest.fn();
  beforeEach(() => {
    scrollIntoView.mockClear();
    Element.prototype.scrollIntoView = scrollIntoView;
  });

  it('scrolls to the server ?server= names, highlights it and moves focus to it', async () => {
    const broker = fakeBroker({
      getCatalog: jest.fn(async () => ({
        servers: ['alpha', 'example'].map(server => ({
          server,
          tools: [{ name: `${server}_echo` }],
          prompts: [],
          resources: [],
          resourceTemplates: [],
        })),
      })),
    });
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...noOtherServers(),
        [mcpBrokerApiRef, broker],
        permissions(mcpBrokerSessionCreatePermission),
      ],
      initialRouteEntries: ['/mcp?server=example'],
    });
    const example = await screen.findByRole('region', { name: 'MCP server example' });
    expect(example).toHaveAttribute('aria-current', 'true');
    expect(example).toHaveFocus();
    expect(scrollIntoView.mock.contexts).toEqual([example]);
    expect(screen.getByRole('region', { name: 'MCP server alpha' })).not.toHaveAttribute(
      'aria-current',
    );
  });

  it('highlights a server the person holds nothing of in "More MCP servers"', async () => {
    await renderPortal(<McpToolsPage />, {
      apis: [
        ...catalogAndProducts([mcpServerEntity('deploybot')], []),
        [mcpBrokerApiRef, fakeBroker()],
        permissions(mcpBrokerSessionCreatePermission),
      ],
      initialRouteEntries: ['/mcp?server=deploybot'],
    });
    const more = await screen.findByRole('list', { name: 'More MCP servers' });
    const item = within(more).getByRole('listitem');
    expect(item).toHaveAttribute('aria-current', 'true');
    expect(scrollIntoView.mock.contexts).toEqual([item]);
  });

  it("reloads the person's tools and the products on offer when a portal notification reaches them, and only then", async () => {
    const signals = new FakeSignalApi();
    // deploybot: in the catalog, nothing of it is the person's, and no product offers it yet.
    const offers: ApiProduct[] = [];
    const [catalog, [, portal]] = catalogAndProducts([mcpServerEntity('deploybot')], offers);
    const notifications = fakeNotificationsApi([
      { id: 'n-catalog', origin: 'plugin:catalog' },
      { id: 'n-portal', origin: 'plugin:portal' },
    ]);
    let granted = false;
    const broker = fakeBroker({
      getCatalog: jest.fn(async () => ({
        servers: granted
          ? [
              {
                server: 'example',
                tools: [{ name: 'example_deploy' }],
                prompts: [],
                resources: [],
                resourceTemplates: [],
              },
            ]
          : [],
      })),
    });
    await renderPortal(<McpToolsPage />, {
      apis: [
        catalog,
        [portalApiRef, portal],
        [mcpBrokerApiRef, broker],
        [signalApiRef, signals],
        [notificationsApiRef, notifications],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(await screen.findByText('No MCP tools for you yet')).toBeInTheDocument();
    expect(await screen.findByText('No product offers it yet')).toBeInTheDocument();
    expect(signals.subscribers('notifications')).toBe(1);

    // Another plugin's notification changes nothing the page shows.
    act(() =>
      signals.publish('notifications', {
        action: 'new_notification',
        notification_id: 'n-catalog',
      }),
    );
    await waitFor(() => expect(notifications.getNotification).toHaveBeenCalledWith('n-catalog'));
    expect(broker.getCatalog).toHaveBeenCalledTimes(1);
    expect(portal.listApiProductsPages).toHaveBeenCalledTimes(1);

    granted = true;
    offers.push(
      mcpProduct({ name: 'deploy-tools', server: 'deploybot', displayName: 'Deploy tools' }),
    );
    act(() =>
      signals.publish('notifications', { action: 'new_notification', notification_id: 'n-portal' }),
    );
    expect(await screen.findByText('example_deploy')).toBeInTheDocument();
    expect(
      await screen.findByRole('link', { name: 'Request access to deploybot through Deploy tools' }),
    ).toHaveAttribute('href', '/portal/products/mcp/deploy-tools');
    expect(broker.getCatalog).toHaveBeenCalledTimes(2);
    expect(portal.listApiProductsPages).toHaveBeenCalledTimes(2);
  });
});
