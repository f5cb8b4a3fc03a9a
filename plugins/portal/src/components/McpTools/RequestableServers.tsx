/*
 * On the MCP tools page (contract mcp-access §8): the MCP servers the person may see in the
 * catalog but holds nothing of (the broker's catalog lists none of their items for them), each
 * with "Request access" links to the Published products that offer it (the products on MCP
 * servers, asked of the portal with `targetKind=MCPServer`, useMcpProducts; the page loads them,
 * and reloads them with what the person may use when a portal notification reaches them).
 */
import { Card, CardBody, CardHeader, Flex, Link, Text } from '@backstage/ui';
import type { ReactNode } from 'react';
import { mcpTargetKey } from '@devportal/plugin-portal-common';
import { useAppLinks } from '../../hooks/useAppLinks';
import type { AsyncData } from '../../hooks/useAsyncData';
import { isRequestable, type McpProductsByTarget } from '../../hooks/useMcpProducts';
import { useMcpServerChoices } from '../../hooks/useMcpServerEntity';
import { useHighlight } from '../../hooks/useHighlight';
import { ErrorState } from '../shared/StateViews';

/** Servers in the catalog the person holds nothing of, with links to request access. */
export function RequestableServers(props: {
  held: ReadonlySet<string>;
  /** The server `?server=` asks for. */
  highlighted?: string;
  /** The MCP products by target (useMcpProducts), loaded and reloaded by the page. */
  products: AsyncData<McpProductsByTarget>;
}) {
  const links = useAppLinks();
  const choices = useMcpServerChoices();
  const { products } = props;
  const error = choices.error ?? products.error;
  if (error !== undefined) {
    return <ErrorState title="Could not find more MCP servers to request" error={error} />;
  }
  const others = (choices.value ?? []).filter(
    choice => choice.target.kind === 'MCPServer' && !props.held.has(choice.target.name),
  );
  if (others.length === 0 || products.value === undefined) return null;
  return (
    <Card>
      <CardHeader>
        <Text as="h2" variant="title-small" weight="bold">
          More MCP servers
        </Text>
      </CardHeader>
      <CardBody>
        <ul aria-label="More MCP servers" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
          {others.map(choice => {
            const offers = (products.value?.get(mcpTargetKey(choice.target)) ?? []).filter(
              isRequestable,
            );
            return (
              <RequestableServer
                key={choice.entityRef}
                highlighted={choice.target.name === props.highlighted}
              >
                <Flex gap="3" align="center" style={{ flexWrap: 'wrap' }}>
                  <Link href={links.entity(choice.entityRef)}>{choice.target.name}</Link>
                  {offers.length === 0 ? (
                    <Text color="secondary">No product offers it yet</Text>
                  ) : (
                    offers.map(product => (
                      <Link
                        key={product.metadata.uid}
                        href={links.portal.product(product.metadata)}
                        aria-label={`Request access to ${choice.target.name} through ${product.spec.displayName}`}
                      >
                        Request access ({product.spec.displayName})
                      </Link>
                    ))
                  )}
                </Flex>
              </RequestableServer>
            );
          })}
        </ul>
      </CardBody>
    </Card>
  );
}

/** One server of the list, highlighted when `?server=` names it. */
function RequestableServer(props: { highlighted: boolean; children: ReactNode }) {
  const highlight = useHighlight<HTMLLIElement>(props.highlighted);
  return (
    <li
      ref={highlight.ref}
      {...highlight.props}
      style={{ padding: '6px 0', ...highlight.props.style }}
    >
      {props.children}
    </li>
  );
}
