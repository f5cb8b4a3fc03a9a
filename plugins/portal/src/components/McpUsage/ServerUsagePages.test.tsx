import type { McpServerUsage } from '@devportal/plugin-mcp-broker-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { mcpBrokerApiRef, type McpBrokerApi } from '../../apis/McpBrokerApi';
import { permissions, serverError } from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { McpToolsRoutes } from '../McpTools/McpToolsRoutes';

const firstPage: McpServerUsage = {
  server: 'example',
  owner: 'group:default/payments-team',
  from: '2026-11-28',
  to: '2026-11-29',
  series: [
    { day: '2026-11-28', tool: 'echo', calls: 4, errors: 1, rateLimited: 0 },
    { day: '2026-11-29', tool: 'deploy', calls: 1, errors: 0, rateLimited: 3 },
    { day: '2026-11-29', tool: 'echo', calls: 2, errors: 0, rateLimited: 0 },
  ],
  people: [
    {
      principal: 'user:default/alice',
      calls: 6,
      errors: 1,
      rateLimited: 3,
      lastDay: '2026-11-29',
      grants: [{ title: 'Example tools', plan: 'bronze', expiresAt: '2026-12-31T00:00:00Z' }],
    },
  ],
  metadata: { continue: 'page-2' },
};

const secondPage: McpServerUsage = {
  ...firstPage,
  people: [
    {
      principal: 'service:plugin:catalog',
      calls: 1,
      errors: 0,
      rateLimited: 0,
      lastDay: '2026-11-28',
      grants: [],
    },
  ],
  metadata: {},
};

function broker(overrides: Partial<McpBrokerApi> = {}) {
  return {
    getServerUsage: jest.fn(async (_server: string, options: { continue?: string }) =>
      options.continue === 'page-2' ? secondPage : firstPage,
    ),
    listServerUsage: jest.fn(async () => ({
      servers: [
        {
          server: 'example',
          owner: 'group:default/payments-team',
          calls: 7,
          errors: 1,
          rateLimited: 3,
          people: 2,
        },
      ],
    })),
    ...overrides,
  } as unknown as jest.Mocked<McpBrokerApi>;
}

describe('usage pages of server owners (fake broker API)', () => {
  it('/mcp/servers lists the servers with their totals, linking to who uses each for the same period', async () => {
    const api = broker();
    await renderPortal(<McpToolsRoutes />, {
      apis: [[mcpBrokerApiRef, api], permissions()],
      mountPath: '/mcp/*',
      initialRouteEntries: ['/mcp/servers?days=90'],
    });
    const row = await screen.findByRole('row', { name: /example/ });
    expect(row).toHaveTextContent('owner group:default/payments-team');
    expect(within(row).getByRole('link', { name: 'example' })).toHaveAttribute(
      'href',
      '/mcp/servers/example/usage?days=90',
    );
    expect(row).toHaveTextContent(/2.*7.*1.*3/);
    expect(api.listServerUsage).toHaveBeenCalledWith(90);
  });

  it('/mcp/servers names the permission on a 403', async () => {
    await renderPortal(<McpToolsRoutes />, {
      apis: [
        [
          mcpBrokerApiRef,
          broker({
            listServerUsage: jest.fn(async () => {
              throw await serverError(403, 'no');
            }),
          }),
        ],
        permissions(),
      ],
      mountPath: '/mcp/*',
      initialRouteEntries: ['/mcp/servers'],
    });
    expect(await screen.findByText(/mcp-broker\.usage\.read/)).toBeInTheDocument();
  });

  it('/mcp/servers/:server/usage charts calls per day by tool with errors, and pages through the people', async () => {
    const api = broker();
    await renderPortal(<McpToolsRoutes />, {
      apis: [[mcpBrokerApiRef, api], permissions()],
      mountPath: '/mcp/*',
      initialRouteEntries: ['/mcp/servers/example/usage'],
    });
    expect(await screen.findByRole('heading', { name: 'Who uses example' })).toBeInTheDocument();
    const chart = screen.getByRole('img', { name: /Calls of example per day by tool/ });
    const table = document.getElementById(chart.getAttribute('aria-describedby')!)!;
    expect(
      within(table)
        .getAllByRole('row')
        .map(r => r.textContent),
    ).toEqual(['DaydeployechoErrors', '2026-11-28041', '2026-11-29120']);
    const people = screen.getByRole('region', { name: 'People' });
    const alice = within(people).getByRole('row', { name: /alice/ });
    expect(within(alice).getByRole('link', { name: 'alice' })).toHaveAttribute(
      'href',
      '/catalog/default/user/alice',
    );
    expect(alice).toHaveTextContent('Example tools: bronze');
    expect(alice).toHaveTextContent('expires');
    expect(api.getServerUsage).toHaveBeenCalledTimes(1);
    expect(api.getServerUsage).toHaveBeenCalledWith('example', { days: 30, limit: 50 });
    await userEvent.click(within(people).getByRole('button', { name: /next/i }));
    expect(
      await within(people).findByRole('row', { name: /service:plugin:catalog/ }),
    ).toBeInTheDocument();
    expect(within(people).queryByRole('row', { name: /alice/ })).not.toBeInTheDocument();
    expect(api.getServerUsage).toHaveBeenLastCalledWith('example', {
      days: 30,
      limit: 50,
      continue: 'page-2',
    });
    // The chart stays the first page's: read once, not again for the second page of people.
    expect(screen.getByRole('img', { name: /Calls of example per day by tool/ })).toBeVisible();
    expect(within(people).getByRole('button', { name: /next/i })).toBeDisabled();
    await userEvent.click(within(people).getByRole('button', { name: /previous/i }));
    expect(await within(people).findByRole('row', { name: /alice/ })).toBeInTheDocument();
    expect(api.getServerUsage).toHaveBeenCalledTimes(2);
  });

  it('/mcp/servers/:server/usage loads the people again for another period', async () => {
    const api = broker();
    await renderPortal(<McpToolsRoutes />, {
      apis: [[mcpBrokerApiRef, api], permissions()],
      mountPath: '/mcp/*',
      initialRouteEntries: ['/mcp/servers/example/usage?days=7'],
    });
    await screen.findByRole('region', { name: 'People' });
    expect(api.getServerUsage).toHaveBeenCalledWith('example', { days: 7, limit: 50 });
    await userEvent.click(screen.getByRole('button', { name: /Period/ }));
    await userEvent.click(await screen.findByRole('option', { name: 'Last 90 days' }));
    await waitFor(() =>
      expect(api.getServerUsage).toHaveBeenLastCalledWith('example', { days: 90, limit: 50 }),
    );
    expect(await screen.findByRole('region', { name: 'People' })).toBeInTheDocument();
  });

  it('/mcp/servers/:server/usage names the permission on a 403 and says when nobody called', async () => {
    await renderPortal(<McpToolsRoutes />, {
      apis: [
        [
          mcpBrokerApiRef,
          broker({
            getServerUsage: jest.fn(async () => {
              throw await serverError(403, 'no');
            }),
          }),
        ],
        permissions(),
      ],
      mountPath: '/mcp/*',
      initialRouteEntries: ['/mcp/servers/example/usage'],
    });
    expect(await screen.findByText(/mcp-broker\.usage\.read/)).toBeInTheDocument();
  });

  it('says when nobody called a tool of the server in the period', async () => {
    await renderPortal(<McpToolsRoutes />, {
      apis: [
        [
          mcpBrokerApiRef,
          broker({
            getServerUsage: jest.fn(async () => ({
              ...firstPage,
              series: [],
              people: [],
              metadata: {},
            })),
          }),
        ],
        permissions(),
      ],
      mountPath: '/mcp/*',
      initialRouteEntries: ['/mcp/servers/example/usage'],
    });
    expect(
      await screen.findByText('Nobody called a tool of example in this period'),
    ).toBeInTheDocument();
  });
});
