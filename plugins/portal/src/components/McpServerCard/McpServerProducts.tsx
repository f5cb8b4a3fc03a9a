/*
 * The products offering one MCP server or endpoint, on its entity card (contract mcp-access §8):
 * each with its plans as quota tables and, for people who may request access
 * (`portal.apikey.create`), their own access to it and "Request access" (Published products
 * only; a Draft is marked, and shown only to its owners by the server). None yet: people who may
 * create products are offered to make one from this server. It asks the portal for this
 * target's products only (the list's `targetKind`/`targetName` filter).
 */
import { Flex, Link, Text } from '@backstage/ui';
import {
  portalApiKeyCreatePermission,
  portalApiProductCreatePermission,
  portalApiProductListPermission,
  type ApiProduct,
  type McpTarget,
} from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { isRequestable, useMcpTargetProducts } from '../../hooks/useMcpProducts';
import { useDecision } from '../../hooks/usePermissions';
import { statusOf } from '../shared/errors';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { McpPlansTable } from '../McpProduct/McpPlansTable';
import { mcpPlansOf } from '../McpProduct/mcpPlans';
import { YourMcpAccess } from '../McpProduct/YourMcpAccess';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { RequestAccessButton } from '../RequestAccess/RequestAccessButton';

/** Props of {@link McpServerProducts}. */
export interface McpServerProductsProps {
  target: McpTarget;
  /** The server's own tool names (to mark plan globs that match none). */
  toolNames: readonly string[];
}

/** The products on a server, with plans, the caller's access and "Request access". */
export function McpServerProducts(props: McpServerProductsProps) {
  const products = useMcpTargetProducts(props.target);
  const paths = usePortalPaths();
  const mayCreate = useDecision(portalApiProductCreatePermission);
  let body;
  if (products.value === undefined && products.loading) {
    body = <LoadingState what="the products offering it" />;
  } else if (statusOf(products.error) === 403) {
    body = (
      <ForbiddenState what="the API products" permission={portalApiProductListPermission.name} />
    );
  } else if (products.error !== undefined) {
    body = <ErrorState title="Could not load the products offering it" error={products.error} />;
  } else {
    const offers = products.value ?? [];
    body =
      offers.length === 0 ? (
        <EmptyState
          title="No product offers it yet"
          description="People get access to an MCP server through an API product on it, with plans of tool-call quotas."
          action={
            mayCreate.allowed && props.target.kind === 'MCPServer' ? (
              <Link href={paths.newMcpProduct(props.target.name)}>Offer it as a product</Link>
            ) : undefined
          }
        />
      ) : (
        <Flex direction="column" gap="4">
          {offers.map(product => (
            <ProductOffer
              key={product.metadata.uid}
              product={product}
              target={props.target}
              toolNames={props.toolNames}
            />
          ))}
        </Flex>
      );
  }
  return (
    <section aria-label="Products offering it">
      <Flex direction="column" gap="2">
        <Text as="h3" variant="title-small" weight="bold">
          Products offering it
        </Text>
        {body}
      </Flex>
    </section>
  );
}

function ProductOffer(props: {
  product: ApiProduct;
  target: McpTarget;
  toolNames: readonly string[];
}) {
  const { product } = props;
  const paths = usePortalPaths();
  const mayRequest = useDecision(portalApiKeyCreatePermission);
  const [keysVersion, setKeysVersion] = useState(0);
  const name = product.spec.displayName;
  return (
    <Flex direction="column" gap="2">
      <Flex gap="3" align="center" style={{ flexWrap: 'wrap' }}>
        <Link href={paths.product(product.metadata)} weight="bold">
          {name}
        </Link>
        {!isRequestable(product) && <Text color="secondary">Draft: not offered yet</Text>}
      </Flex>
      <McpPlansTable
        plans={mcpPlansOf(product)}
        tools={props.toolNames}
        label={`Plans of ${name}`}
      />
      {mayRequest.allowed && (
        <>
          <YourMcpAccess product={product} target={props.target} refreshKey={keysVersion} />
          {isRequestable(product) && (
            <Flex>
              <RequestAccessButton
                product={product}
                label={`Request access through ${name}`}
                onRequested={() => setKeysVersion(v => v + 1)}
              />
            </Flex>
          )}
        </>
      )}
    </Flex>
  );
}
