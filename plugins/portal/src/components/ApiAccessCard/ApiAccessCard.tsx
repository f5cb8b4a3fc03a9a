/*
 * The "API access" card on API entities the portal's catalog module made (annotation
 * `portal.devportal.io/api-product: <namespace>/<name>`): the product's plans, the person's own
 * keys for it, and "Request access" when they may create keys.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import type { Entity } from '@backstage/catalog-model';
import { Card, CardBody, CardHeader, Flex, Link, Text } from '@backstage/ui';
import {
  portalApiKeyCreatePermission,
  portalApiProductReadOwnPermission,
  type ApiProduct,
} from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { useDecision } from '../../hooks/usePermissions';
import { statusOf } from '../shared/errors';
import { MyProductKeys } from '../shared/MyProductKeys';
import { PortalStyles } from '../shared/PortalStyles';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { RequestAccessButton } from '../RequestAccess/RequestAccessButton';
import { PlansTable } from '../ProductDetail/PlansTable';
import { portalPaths, PortalPathsProvider, usePortalPaths } from '../PortalPage/portalPaths';

/** The annotation the portal's catalog module puts on the API entities it makes. @public */
export const API_PRODUCT_ANNOTATION = 'portal.devportal.io/api-product';

/** The product an entity stands for, from its annotation; undefined for other entities. */
export function productRefOf(entity: Entity): { namespace: string; name: string } | undefined {
  const value = entity.metadata.annotations?.[API_PRODUCT_ANNOTATION];
  const match = value === undefined ? null : /^([^/]+)\/([^/]+)$/.exec(value);
  return match ? { namespace: match[1], name: match[2] } : undefined;
}

/** Whether the card belongs on an entity: an API the portal's catalog module made. @public */
export function isPortalApiEntity(entity: Entity): boolean {
  return entity.kind.toLowerCase() === 'api' && productRefOf(entity) !== undefined;
}

/** Props of {@link ApiAccessCard}. @public */
export interface ApiAccessCardProps {
  /** An API entity with the `portal.devportal.io/api-product` annotation. */
  entity: Entity;
  /** Where the portal page is mounted (links to the product and to My keys). */
  portalBasePath?: string;
}

/**
 * The "API access" card: the product's plans, the person's keys for it and "Request access".
 *
 * @public
 */
export function ApiAccessCard(props: ApiAccessCardProps) {
  const ref = productRefOf(props.entity);
  const portal = useApi(portalApiRef);
  const product = useAsyncData(
    async () => (ref === undefined ? undefined : portal.getApiProduct(ref)),
    [portal, ref?.namespace, ref?.name],
  );
  const paths = usePortalPaths();
  const value = props.portalBasePath === undefined ? paths : portalPaths(props.portalBasePath);
  let body;
  if (ref === undefined) {
    body = <EmptyState title="This API is not a portal product" />;
  } else if (product.value === undefined && product.loading) {
    body = <LoadingState what="API access" />;
  } else if (statusOf(product.error) === 404) {
    body = (
      <EmptyState
        title="The API product is not available"
        description="It was removed from the portal, or you may not see it."
      />
    );
  } else if (statusOf(product.error) === 403) {
    body = (
      <ForbiddenState what="this API product" permission={portalApiProductReadOwnPermission.name} />
    );
  } else if (product.error !== undefined) {
    body = <ErrorState title="Could not load the API product" error={product.error} />;
  } else if (product.value !== undefined) {
    body = <ProductAccess product={product.value} />;
  }
  return (
    <PortalPathsProvider value={value}>
      <PortalStyles />
      <Card>
        <CardHeader>
          <Text as="h2" variant="title-small" weight="bold">
            API access
          </Text>
        </CardHeader>
        <CardBody>{body}</CardBody>
      </Card>
    </PortalPathsProvider>
  );
}

function ProductAccess(props: { product: ApiProduct }) {
  const { product } = props;
  const paths = usePortalPaths();
  const mayRequest = useDecision(portalApiKeyCreatePermission);
  const [keysVersion, setKeysVersion] = useState(0);
  return (
    <Flex direction="column" gap="3">
      <PlansTable
        plans={product.status?.plans ?? []}
        label={`Plans of ${product.spec.displayName}`}
      />
      {mayRequest.allowed && (
        <>
          <MyProductKeys product={product} refreshKey={keysVersion} />
          <Flex gap="3" align="center">
            <RequestAccessButton product={product} onRequested={() => setKeysVersion(v => v + 1)} />
            <Link href={paths.product(product.metadata)}>Open in the portal</Link>
          </Flex>
        </>
      )}
    </Flex>
  );
}
