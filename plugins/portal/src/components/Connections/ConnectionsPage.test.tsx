import { mcpBrokerSessionCreatePermission } from '@devportal/plugin-mcp-broker-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Route, Routes } from 'react-router-dom';
import { mcpBrokerApiRef, type McpBrokerApi, type McpConnection } from '../../apis/McpBrokerApi';
import { permissions, rejecting, serverError } from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { ConnectionsPage } from './ConnectionsPage';

const github: McpConnection = {
  server: 'github',
  stored: true,
  inUse: true,
  description: 'A fine-grained personal access token',
  createdAt: '2026-11-20T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};
const jira: McpConnection = { server: 'jira', stored: false, inUse: true };
const retired: McpConnection = {
  server: 'old-wiki',
  stored: true,
  inUse: false,
  createdAt: '2026-01-02T10:00:00.000Z',
  updatedAt: '2026-01-02T10:00:00.000Z',
};

/** A fake broker API: only the connection methods answer. */
function fakeBroker(connections: McpConnection[]): jest.Mocked<McpBrokerApi> {
  const unexpected = (name: string) =>
    jest.fn(async () => {
      throw new Error(`unexpected call of McpBrokerApi.${name}`);
    });
  return {
    getEndpointUrl: unexpected('getEndpointUrl'),
    getCatalog: unexpected('getCatalog'),
    getStatus: unexpected('getStatus'),
    getToolChanges: unexpected('getToolChanges'),
    decideToolChange: unexpected('decideToolChange'),
    listConnections: jest.fn(async () => connections),
    storeConnection: jest.fn(async () => {}),
    deleteConnection: jest.fn(async () => {}),
  } as unknown as jest.Mocked<McpBrokerApi>;
}

const page = (
  <Routes>
    <Route path="/connections/*" element={<ConnectionsPage />} />
  </Routes>
);

const rowOf = async (server: string) =>
  (await screen.findByRole('rowheader', { name: new RegExp(`^${server}`) })).closest('tr')!;

describe('My connections (fake broker API, fake permissions)', () => {
  it('lists servers and dates, never a value, and offers store only where it can be used', async () => {
    const broker = fakeBroker([github, jira, retired]);
    await renderPortal(page, {
      initialRouteEntries: ['/connections'],
      apis: [[mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    const githubRow = await rowOf('github');
    expect(within(githubRow).getByText('Stored')).toBeInTheDocument();
    expect(within(githubRow).getByText(/since Nov 20, 2026/)).toBeInTheDocument();
    expect(
      within(githubRow).getByRole('button', { name: 'Replace credential for github' }),
    ).toBeInTheDocument();
    const jiraRow = await rowOf('jira');
    expect(within(jiraRow).getByText('Not stored')).toBeInTheDocument();
    expect(within(jiraRow).queryByRole('button', { name: /Delete/ })).not.toBeInTheDocument();
    // A credential its server no longer takes can only be deleted.
    const retiredRow = await rowOf('old-wiki');
    expect(within(retiredRow).queryByRole('button', { name: /Store|Replace/ })).toBeNull();
    expect(
      within(retiredRow).getByRole('button', { name: 'Delete credential for old-wiki' }),
    ).toBeInTheDocument();
  });

  it('hides storing without mcp-broker.session.create, but still lets a person delete theirs', async () => {
    await renderPortal(page, {
      initialRouteEntries: ['/connections'],
      apis: [[mcpBrokerApiRef, fakeBroker([github, jira])], permissions()],
    });
    const githubRow = await rowOf('github');
    expect(within(githubRow).queryByRole('button', { name: /Replace|Store/ })).toBeNull();
    expect(
      within(githubRow).getByRole('button', { name: 'Delete credential for github' }),
    ).toBeInTheDocument();
    expect(within(await rowOf('jira')).queryByRole('button')).toBeNull();
  });

  it('stores a credential, clears it from the page and lists the new state', async () => {
    const broker = fakeBroker([jira]);
    await renderPortal(page, {
      initialRouteEntries: ['/connections'],
      apis: [[mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    await userEvent.click(
      within(await rowOf('jira')).getByRole('button', { name: 'Store credential for jira' }),
    );
    const dialog = await screen.findByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText(/Credential/), 'jira-secret-1');
    broker.listConnections.mockResolvedValue([
      { ...jira, stored: true, createdAt: github.createdAt, updatedAt: github.updatedAt },
    ]);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Store' }));
    expect(broker.storeConnection).toHaveBeenCalledWith('jira', 'jira-secret-1', undefined);
    expect(await screen.findByText('Stored your credential for jira.')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(within(await rowOf('jira')).getByText('Stored')).toBeInTheDocument();
    expect(document.body.textContent).not.toContain('jira-secret-1');
  });

  it("opens the linked server's store dialog for an MCP client's elicitation and answers it", async () => {
    const broker = fakeBroker([github, jira]);
    await renderPortal(page, {
      initialRouteEntries: ['/connections/jira?elicitationId=elic-1'],
      apis: [[mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    expect(
      await screen.findByText('Your MCP client sent you here to store your credential for jira'),
    ).toBeInTheDocument();
    const dialog = await screen.findByRole('dialog', { name: /Your credential for jira/ });
    await userEvent.type(within(dialog).getByLabelText(/Credential/), 'jira-secret-2');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Store' }));
    expect(broker.storeConnection).toHaveBeenCalledWith('jira', 'jira-secret-2', 'elic-1');
    expect(
      await screen.findByText(
        'Stored your credential for jira. Go back to your MCP client and call the tool again.',
      ),
    ).toBeInTheDocument();
  });

  it("shows the broker's refusal in the dialog and stores nothing", async () => {
    const broker = fakeBroker([jira]);
    broker.storeConnection.mockImplementation(
      rejecting(await serverError(403, 'This link was made for another person')),
    );
    await renderPortal(page, {
      initialRouteEntries: ['/connections/jira?elicitationId=theirs'],
      apis: [[mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    const dialog = await screen.findByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText(/Credential/), 'x');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Store' }));
    const alert = await within(dialog).findByRole('alert');
    expect(alert).toHaveTextContent('Nothing was stored');
    expect(alert).toHaveTextContent('This link was made for another person');
  });

  it('says so when the link names a server that takes no personal credential', async () => {
    await renderPortal(page, {
      initialRouteEntries: ['/connections/gone'],
      apis: [
        [mcpBrokerApiRef, fakeBroker([github])],
        permissions(mcpBrokerSessionCreatePermission),
      ],
    });
    expect(
      await screen.findByText('No MCP server "gone" takes a personal credential'),
    ).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('deletes a credential after a confirmation', async () => {
    const broker = fakeBroker([github]);
    await renderPortal(page, {
      initialRouteEntries: ['/connections'],
      apis: [[mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    await userEvent.click(
      within(await rowOf('github')).getByRole('button', { name: 'Delete credential for github' }),
    );
    broker.listConnections.mockResolvedValue([{ server: 'github', stored: false, inUse: true }]);
    await userEvent.click(
      within(await screen.findByRole('dialog')).getByRole('button', { name: 'Delete credential' }),
    );
    expect(broker.deleteConnection).toHaveBeenCalledWith('github');
    expect(await screen.findByText('Deleted your credential for github.')).toBeInTheDocument();
    expect(within(await rowOf('github')).getByText('Not stored')).toBeInTheDocument();
  });

  it("shows the broker's message when the list cannot be loaded", async () => {
    const broker = fakeBroker([]);
    broker.listConnections.mockImplementation(
      rejecting(await serverError(503, 'The broker database is down')),
    );
    await renderPortal(page, {
      initialRouteEntries: ['/connections'],
      apis: [[mcpBrokerApiRef, broker], permissions(mcpBrokerSessionCreatePermission)],
    });
    expect(await screen.findByRole('alert')).toHaveTextContent('The broker database is down');
  });
});
