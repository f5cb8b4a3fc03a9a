import {
  mcpBrokerSessionCreatePermission,
  type MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';
import { fireEvent, screen, within } from '@testing-library/react';
import { mcpBrokerApiRef, type McpBrokerApi } from '../../apis/McpBrokerApi';
import { permissions, rejecting, serverError } from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { MyUsagePage } from './MyUsagePage';

const usage: MyMcpUsage = {
  subject: 'user:default/alice',
  from: '2026-11-27',
  to: '2026-11-29',
  days: [
    { day: '2026-11-27', server: 'example', tool: 'echo', calls: 3, errors: 1, rateLimited: 0 },
    { day: '2026-11-29', server: 'example', tool: 'echo', calls: 2, errors: 0, rateLimited: 2 },
    {
      day: '2026-11-29',
      server: 'backstage',
      tool: 'catalog_get',
      calls: 4,
      errors: 0,
      rateLimited: 0,
    },
  ],
  grants: [
    {
      id: 'portal:mcp/alice-example',
      target: { kind: 'server', name: 'example' },
      title: 'Example tools',
      plan: 'bronze',
      approvedAt: '2026-11-20T10:00:00Z',
      expiresAt: '2026-12-31T00:00:00Z',
      manage: '/portal/keys',
      limits: [
        { calls: 5, windowMs: 86_400_000, used: 3, windowEndsAt: '2026-11-30T00:00:00Z' },
        {
          calls: 10,
          windowMs: 60_000,
          tools: ['deploy'],
          used: 0,
          windowEndsAt: '2026-11-29T08:01:00Z',
        },
      ],
    },
  ],
};

function broker(overrides: Partial<McpBrokerApi> = {}) {
  return {
    getMyUsage: jest.fn(async () => usage),
    ...overrides,
  } as unknown as jest.Mocked<McpBrokerApi>;
}

describe('MyUsagePage (fake broker API, fake permissions)', () => {
  it('shows the calls per day as a chart described by its data table, the per-tool totals and the plans with meters', async () => {
    const api = broker();
    await renderPortal(<MyUsagePage />, {
      apis: [[mcpBrokerApiRef, api], permissions(mcpBrokerSessionCreatePermission)],
    });
    const chart = await screen.findByRole('img', { name: /Your tool calls per day by server/ });
    const table = document.getElementById(chart.getAttribute('aria-describedby')!)!;
    const rows = within(table)
      .getAllByRole('row')
      .map(r => r.textContent);
    // Day, then the servers in name order, then errors + rate-limited.
    expect(rows).toEqual([
      'DaybackstageexampleErrors and rate-limited',
      '2026-11-27031',
      '2026-11-28000',
      '2026-11-29422',
    ]);
    const totals = screen.getByRole('region', { name: 'Calls per server and tool' });
    const echo = within(totals).getByRole('row', { name: /example/ });
    expect(echo).toHaveTextContent('echo');
    expect(echo).toHaveTextContent('5');
    const plans = screen.getByRole('region', { name: 'Your plans' });
    expect(
      within(plans).getByRole('heading', { name: 'Example tools: bronze' }),
    ).toBeInTheDocument();
    const meter = within(plans).getByRole('meter', { name: '3 of 5 per day (UTC)' });
    expect(meter).toHaveAttribute('value', '3');
    expect(
      within(plans).getByRole('meter', { name: '0 of 10 per minute for deploy' }),
    ).toBeInTheDocument();
    expect(within(plans).getByRole('link', { name: 'Manage this access' })).toHaveAttribute(
      'href',
      '/portal/keys',
    );
    expect(api.getMyUsage).toHaveBeenCalledWith(30);
  });

  it('reads the period from the URL and asks again when it changes', async () => {
    const api = broker();
    await renderPortal(<MyUsagePage />, {
      apis: [[mcpBrokerApiRef, api], permissions(mcpBrokerSessionCreatePermission)],
      initialRouteEntries: ['/mcp/usage?days=7'],
    });
    await screen.findByRole('region', { name: 'Your plans' });
    expect(api.getMyUsage).toHaveBeenLastCalledWith(7);
    fireEvent.click(screen.getByRole('button', { name: /Period/ }));
    fireEvent.click(await screen.findByRole('option', { name: 'Last 90 days' }));
    await screen.findByRole('region', { name: 'Your plans' });
    expect(api.getMyUsage).toHaveBeenLastCalledWith(90);
  });

  it('says when there are no calls yet and still shows the plans', async () => {
    await renderPortal(<MyUsagePage />, {
      apis: [
        [mcpBrokerApiRef, broker({ getMyUsage: jest.fn(async () => ({ ...usage, days: [] })) })],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(await screen.findByText('No tool calls in this period')).toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Your plans' })).toBeInTheDocument();
    expect(screen.queryByRole('img')).not.toBeInTheDocument();
  });

  it("shows the server's message when the usage cannot be read", async () => {
    await renderPortal(<MyUsagePage />, {
      apis: [
        [
          mcpBrokerApiRef,
          broker({ getMyUsage: rejecting(await serverError(500, 'usage store down')) }),
        ],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(await screen.findByText(/usage store down/)).toBeInTheDocument();
  });

  it('names the permission for a person who may not use the broker, without asking for usage', async () => {
    const api = broker();
    await renderPortal(<MyUsagePage />, { apis: [[mcpBrokerApiRef, api], permissions()] });
    expect(await screen.findByText(/mcp-broker\.session\.create/)).toBeInTheDocument();
    expect(api.getMyUsage).not.toHaveBeenCalled();
  });
});
