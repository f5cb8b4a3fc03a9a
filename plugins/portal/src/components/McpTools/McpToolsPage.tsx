/*
 * `/mcp`: what this person may use through the MCP broker, per server — tools (with their
 * declared annotations), prompts, resources and resource templates, as the broker decides them
 * (GET /api/mcp-broker/catalog) — the broker's endpoint and how to connect an IDE to it, and for
 * holders of `mcp-broker.status.read` each backend's state, protocol era and last error; for
 * holders of `mcp-broker.tool.approve` the held tool definition changes (HeldToolChanges); the
 * curated endpoints the person may use (CuratedEndpoints); and the catalog's other servers with
 * "Request access" links to their products (RequestableServers). `?server=<name>` (the link on
 * the server's catalog entity) scrolls to that server and highlights it. A portal notification
 * to the person (their access changed) reloads what they may use, without a page reload.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Box,
  Card,
  CardBody,
  CardHeader,
  Flex,
  Link,
  Table,
  Text,
  type ColumnConfig,
} from '@backstage/ui';
import {
  mcpBrokerSessionCreatePermission,
  mcpBrokerStatusReadPermission,
  mcpBrokerToolApprovePermission,
  type McpServerCatalog,
} from '@devportal/plugin-mcp-broker-common';
import { mcpBrokerApiRef, type McpBackendStatus } from '../../apis/McpBrokerApi';
import { useAppLinks } from '../../hooks/useAppLinks';
import { useAsyncData } from '../../hooks/useAsyncData';
import { useHighlight, useHighlightedServer } from '../../hooks/useHighlight';
import { useMcpProducts } from '../../hooks/useMcpProducts';
import { useDecision } from '../../hooks/usePermissions';
import { usePortalNotificationSignal } from '../../hooks/usePortalNotificationSignal';
import { statusOf } from '../shared/errors';
import { formatDateTime } from '../shared/format';
import { PortalStyles } from '../shared/PortalStyles';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { HeldToolChanges } from './HeldToolChanges';
import { CuratedEndpoints, mcpClientSnippet } from './CuratedEndpoints';
import { RequestableServers } from './RequestableServers';
import { annotationLabels, CatalogSection, resourceEntries } from '../shared/McpCatalogSection';

/** The MCP tools page. */
export function McpToolsPage() {
  const session = useDecision(mcpBrokerSessionCreatePermission);
  const status = useDecision(mcpBrokerStatusReadPermission);
  const approve = useDecision(mcpBrokerToolApprovePermission);
  if (session.loading) {
    return (
      <Box px="5" py="4">
        <LoadingState what="MCP tools" />
      </Box>
    );
  }
  if (!session.allowed) {
    return (
      <Box px="5" py="4">
        <ForbiddenState what="the MCP broker" permission={mcpBrokerSessionCreatePermission.name} />
      </Box>
    );
  }
  return (
    <Flex direction="column" gap="5" px="5" py="4">
      <PortalStyles />
      <UsageLinks />
      <ConnectCard />
      <ServerCatalog />
      {approve.allowed && <HeldToolChanges />}
      {status.allowed && <BackendStatus />}
    </Flex>
  );
}

/** Links to the usage pages below this one (contract mcp-access §8). */
function UsageLinks() {
  const links = useAppLinks();
  return (
    <nav aria-label="MCP usage">
      <Flex gap="4">
        <Link href={links.mcpUsage}>My MCP usage</Link>
        <Link href={links.mcpServersUsage}>My servers' usage</Link>
      </Flex>
    </nav>
  );
}

function ConnectCard() {
  const broker = useApi(mcpBrokerApiRef);
  const endpoint = useAsyncData(() => broker.getEndpointUrl(), [broker]);
  const url = endpoint.value ?? '…';
  const snippet = mcpClientSnippet('backstage', url);
  return (
    <Card>
      <CardHeader>
        <Text as="h2" variant="title-small" weight="bold">
          Connect an IDE
        </Text>
      </CardHeader>
      <CardBody>
        <Flex direction="column" gap="2">
          <Text>
            The broker serves every tool below at one MCP endpoint (streamable HTTP, MCP 2025-11-25
            and 2026-07-28):
          </Text>
          <Text as="p" weight="bold">
            <code>{url}</code>
          </Text>
          <Text>
            Add it to your MCP client, for example in VS Code&apos;s <code>.vscode/mcp.json</code>:
          </Text>
          <pre aria-label="MCP client configuration" style={{ whiteSpace: 'pre-wrap' }}>
            {snippet}
          </pre>
          <Text>
            The client signs you in through Backstage: your browser opens Backstage&apos;s consent
            page, where you approve the client; it then acts as you, with your permissions.
          </Text>
        </Flex>
      </CardBody>
    </Card>
  );
}

function ServerCatalog() {
  const broker = useApi(mcpBrokerApiRef);
  const catalog = useAsyncData(() => broker.getCatalog(), [broker]);
  const products = useMcpProducts('MCPServer');
  // The person's access changed: what they may use, and the offers of the others, again.
  usePortalNotificationSignal(() => {
    catalog.reload();
    products.reload();
  });
  const highlighted = useHighlightedServer();
  if (catalog.value === undefined && catalog.loading) return <LoadingState what="MCP tools" />;
  if (catalog.error !== undefined) {
    return statusOf(catalog.error) === 403 ? (
      <ForbiddenState what="the MCP broker" permission={mcpBrokerSessionCreatePermission.name} />
    ) : (
      <ErrorState title="Could not load the MCP tools" error={catalog.error} />
    );
  }
  const servers = catalog.value?.servers ?? [];
  const held = new Set(servers.map(server => server.server));
  return (
    <Flex direction="column" gap="4">
      {servers.length === 0 ? (
        <EmptyState
          title="No MCP tools for you yet"
          description="No server offers a tool, prompt or resource you may use."
        />
      ) : (
        servers.map(server => (
          <ServerCard
            key={server.server}
            server={server}
            highlighted={server.server === highlighted}
          />
        ))
      )}
      <CuratedEndpoints endpoints={catalog.value?.endpoints ?? []} />
      <RequestableServers held={held} highlighted={highlighted} products={products} />
    </Flex>
  );
}

function ServerCard(props: { server: McpServerCatalog; highlighted: boolean }) {
  const { server } = props;
  const resources = resourceEntries(server.resources, server.resourceTemplates);
  const highlight = useHighlight<HTMLElement>(props.highlighted);
  return (
    <section ref={highlight.ref} aria-label={`MCP server ${server.server}`} {...highlight.props}>
      <Card>
        <CardHeader>
          <Text as="h2" variant="title-small" weight="bold">
            {server.server}
          </Text>
        </CardHeader>
        <CardBody>
          <Flex direction="column" gap="3">
            <CatalogSection
              kind="Tools"
              server={server.server}
              emptyText="None you may use."
              entries={server.tools.map(tool => ({
                id: tool.name,
                name: tool.name,
                title: tool.title,
                description: tool.description,
                labels: annotationLabels(tool.annotations),
              }))}
            />
            <CatalogSection
              kind="Prompts"
              server={server.server}
              entries={server.prompts.map(prompt => ({
                id: prompt.name,
                name: prompt.name,
                description: prompt.description,
              }))}
            />
            <CatalogSection kind="Resources" server={server.server} entries={resources} />
          </Flex>
        </CardBody>
      </Card>
    </section>
  );
}

interface BackendRow {
  id: string;
  backend: McpBackendStatus;
}

const statusColumns: ColumnConfig<BackendRow>[] = [
  {
    id: 'name',
    label: 'Server',
    isRowHeader: true,
    cell: ({ backend }) => <TextCell title={backend.name} description={backend.url} />,
  },
  {
    id: 'state',
    label: 'State',
    cell: ({ backend }) => (
      <TextCell
        title={backend.state}
        description={
          backend.nextRetryAt ? `Next attempt ${formatDateTime(backend.nextRetryAt)}` : undefined
        }
      />
    ),
  },
  {
    id: 'era',
    label: 'Protocol',
    cell: ({ backend }) => (
      <TextCell
        title={backend.era === undefined ? 'not detected yet' : backend.era}
        description={backend.protocolVersion}
      />
    ),
  },
  {
    id: 'error',
    label: 'Last error',
    cell: ({ backend }) => <TextCell title={backend.lastError ?? '—'} />,
  },
];

function BackendStatus() {
  const broker = useApi(mcpBrokerApiRef);
  const status = useAsyncData(() => broker.getStatus(), [broker]);
  let body;
  if (status.value === undefined && status.loading) body = <LoadingState what="backend status" />;
  else if (status.error !== undefined)
    body = <ErrorState title="Could not load the backend status" error={status.error} />;
  else
    body = (
      <section aria-label="Backend status">
        <Table
          columnConfig={statusColumns}
          data={(status.value?.backends ?? []).map(backend => ({ id: backend.name, backend }))}
          pagination={{ type: 'none' }}
          emptyState={<EmptyState title="No MCP servers are configured" />}
        />
      </section>
    );
  return (
    <Flex direction="column" gap="2">
      <Text as="h2" variant="title-small" weight="bold">
        Backend status
      </Text>
      {body}
    </Flex>
  );
}
