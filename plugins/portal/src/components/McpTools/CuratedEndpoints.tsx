/*
 * The curated endpoints of the MCP broker a person may use (spec §13, contract §7): those through
 * which they see at least one tool (GET /api/mcp-broker/catalog says which), each with its URL,
 * its instructions and the MCP client snippet the main endpoint's card shows — so a person can
 * hand an agent a small endpoint instead of every tool.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Card, CardBody, CardHeader, Flex, Text } from '@backstage/ui';
import type { McpCatalogEndpoint } from '@devportal/plugin-mcp-broker-common';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { useAsyncData } from '../../hooks/useAsyncData';

/** The `.vscode/mcp.json` entry that connects a client to `url` under the name `name`. */
export function mcpClientSnippet(name: string, url: string): string {
  return JSON.stringify({ servers: { [name]: { type: 'http', url } } }, null, 2);
}

/** A curated endpoint's URL, given the main endpoint's (`…/api/mcp-broker/mcp`). */
export function curatedEndpointUrl(mainUrl: string, name: string): string {
  return mainUrl.replace(/\/mcp$/, `/endpoints/${encodeURIComponent(name)}/mcp`);
}

/** The endpoints the person may use, one card each; nothing when there are none. */
export function CuratedEndpoints(props: { endpoints: readonly McpCatalogEndpoint[] }) {
  const broker = useApi(mcpBrokerApiRef);
  const main = useAsyncData(() => broker.getEndpointUrl(), [broker]);
  if (props.endpoints.length === 0) return null;
  return (
    <Flex direction="column" gap="4">
      <Text as="h2" variant="title-small" weight="bold">
        Curated endpoints
      </Text>
      <Text>
        Smaller views of the same tools, for agents with one job: each shows only some servers and
        tools, never more than you may use.
      </Text>
      {props.endpoints.map(endpoint => (
        <EndpointCard key={endpoint.name} endpoint={endpoint} mainUrl={main.value} />
      ))}
    </Flex>
  );
}

function EndpointCard(props: { endpoint: McpCatalogEndpoint; mainUrl: string | undefined }) {
  const { endpoint } = props;
  const url = props.mainUrl === undefined ? '…' : curatedEndpointUrl(props.mainUrl, endpoint.name);
  return (
    <Card>
      <CardHeader>
        <Text as="h3" variant="body-large" weight="bold">
          {endpoint.title}
        </Text>
      </CardHeader>
      <CardBody>
        <Flex direction="column" gap="2">
          <Text>
            {endpoint.tools === 1 ? '1 tool' : `${endpoint.tools} tools`} for you at{' '}
            <code>{url}</code>
          </Text>
          {endpoint.instructions !== undefined && (
            <Text as="p" aria-label={`Instructions of ${endpoint.name}`}>
              {endpoint.instructions}
            </Text>
          )}
          <pre
            aria-label={`MCP client configuration for ${endpoint.name}`}
            style={{ whiteSpace: 'pre-wrap' }}
          >
            {mcpClientSnippet(endpoint.name, url)}
          </pre>
        </Flex>
      </CardBody>
    </Card>
  );
}
