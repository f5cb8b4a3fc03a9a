/*
 * `/portal/products/:namespace/:name`: one product — description, version, tags, docs and
 * OpenAPI links, contact, and its plans (from `status.plans`); "Request access" for people who
 * may create keys; edit, publish/unpublish and delete for those whose `.own`/`.all` permissions
 * cover it. A product the person may not read answers 404 like a missing one, and the page says
 * just that.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Alert,
  Button,
  Card,
  CardBody,
  CardHeader,
  Flex,
  Grid,
  Link,
  Tag,
  TagGroup,
  Text,
} from '@backstage/ui';
import {
  isMcpTarget,
  OWNER_ANNOTATION,
  portalApiKeyCreatePermission,
  portalApiProductDeleteAllPermission,
  portalApiProductDeleteOwnPermission,
  portalApiProductReadOwnPermission,
  portalApiProductUpdateAllPermission,
  portalApiProductUpdateOwnPermission,
  type ApiProduct,
} from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { portalApiRef } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { ownsProduct, useOwnership } from '../../hooks/useOwnership';
import { covers, useDecision, useScopedDecision } from '../../hooks/usePermissions';
import { statusOf } from '../shared/errors';
import { ErrorAlert } from '../shared/ErrorAlert';
import { formatDateTime, shortEntityRef } from '../shared/format';
import { MyProductKeys } from '../shared/MyProductKeys';
import { PublishBadge } from '../shared/PhaseBadge';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { DeleteProductDialog } from '../ProductEditor/DeleteProductDialog';
import { EditProductDialog } from '../ProductEditor/EditProductDialog';
import { RequestAccessDialog } from '../RequestAccess/RequestAccessDialog';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { PlansTable } from './PlansTable';
import { MarkdownText } from '../shared/MarkdownText';
import { McpProductSections } from '../McpProduct/McpProductSections';

/** The product detail page (route params `namespace`, `name`). */
export function ProductDetailPage() {
  const { namespace = '', name = '' } = useParams();
  const portal = useApi(portalApiRef);
  const product = useAsyncData(
    () => portal.getApiProduct({ namespace, name }),
    [portal, namespace, name],
  );
  if (product.value === undefined) {
    if (product.loading) return <LoadingState what="the API product" />;
    if (statusOf(product.error) === 404) {
      return (
        <EmptyState
          title="API product not found"
          description={`There is no API product ${namespace}/${name}, or you may not see it.`}
        />
      );
    }
    if (statusOf(product.error) === 403) {
      return (
        <ForbiddenState what="API products" permission={portalApiProductReadOwnPermission.name} />
      );
    }
    return <ErrorState title="Could not load the API product" error={product.error} />;
  }
  return <ProductDetail product={product.value} onChanged={product.reload} />;
}

function ProductDetail(props: { product: ApiProduct; onChanged: () => void }) {
  const { product } = props;
  const { spec, metadata } = product;
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const navigate = useNavigate();
  const ownership = useOwnership();
  const owned = ownsProduct(ownership, product);
  const mayRequest = useDecision(portalApiKeyCreatePermission);
  const update = useScopedDecision(
    portalApiProductUpdateOwnPermission,
    portalApiProductUpdateAllPermission,
  );
  const remove = useScopedDecision(
    portalApiProductDeleteOwnPermission,
    portalApiProductDeleteAllPermission,
  );
  const [dialog, setDialog] = useState<'request' | 'edit' | 'delete'>();
  const [keysVersion, setKeysVersion] = useState(0);
  const [publishing, setPublishing] = useState(false);
  const [actionError, setActionError] = useState<unknown>();
  const mayEdit = covers(update, owned);
  const mayDelete = covers(remove, owned);
  const published = spec.publishStatus === 'Published';
  const target = isMcpTarget(spec.targetRef) ? spec.targetRef : undefined;

  const togglePublished = async () => {
    setPublishing(true);
    setActionError(undefined);
    try {
      await portal.updateApiProduct(metadata, {
        metadata: { resourceVersion: metadata.resourceVersion },
        spec: { publishStatus: published ? 'Draft' : 'Published' },
      });
      props.onChanged();
    } catch (e) {
      setActionError(e);
    } finally {
      setPublishing(false);
    }
  };

  return (
    <Flex direction="column" gap="4">
      <Flex justify="between" align="start" gap="4">
        <Flex direction="column" gap="1">
          <Text as="h2" variant="title-medium" weight="bold">
            {spec.displayName}
          </Text>
          <Text color="secondary">
            {metadata.namespace}/{metadata.name}
            {spec.version !== undefined && ` · version ${spec.version}`} · owned by{' '}
            {shortEntityRef(metadata.annotations?.[OWNER_ANNOTATION])}
          </Text>
          <Flex gap="2" align="center">
            <PublishBadge status={spec.publishStatus} />
            {spec.approvalMode === 'automatic' && (
              <Text variant="body-small" color="secondary">
                Requests are approved automatically
              </Text>
            )}
          </Flex>
        </Flex>
        <Flex gap="2" justify="end" style={{ flexWrap: 'wrap' }}>
          {mayRequest.allowed && published && (
            <Button variant="primary" onPress={() => setDialog('request')}>
              Request access
            </Button>
          )}
          {mayEdit && (
            <>
              <Button variant="secondary" onPress={() => setDialog('edit')}>
                Edit
              </Button>
              <Button variant="secondary" onPress={togglePublished} isPending={publishing}>
                {published ? 'Unpublish' : 'Publish'}
              </Button>
            </>
          )}
          {mayDelete && (
            // Not `destructive`: @backstage/ui's destructive secondary button fails WCAG AA
            // contrast (3.3:1); the confirmation dialog's button is the destructive one.
            <Button variant="secondary" onPress={() => setDialog('delete')}>
              Delete
            </Button>
          )}
        </Flex>
      </Flex>
      <ErrorAlert title="The product was not changed" error={actionError} />
      {!published && (
        <Alert
          status="info"
          icon
          title="Draft"
          description="Only its owners see this product; publish it to list it in the catalog and accept key requests."
        />
      )}
      <Grid.Root columns={{ initial: '1', md: '3' }} gap="4">
        <Grid.Item colSpan={{ initial: '1', md: '2' }}>
          <Card>
            <CardHeader>
              <Text as="h3" variant="title-small" weight="bold">
                About
              </Text>
            </CardHeader>
            <CardBody>
              <Flex direction="column" gap="3">
                {spec.description === undefined ? (
                  <Text>No description.</Text>
                ) : (
                  <MarkdownText text={spec.description} />
                )}
                {(spec.tags ?? []).length > 0 && (
                  <TagGroup aria-label="Tags">
                    {(spec.tags ?? []).map(tag => (
                      <Tag key={tag} id={tag} size="small">
                        {tag}
                      </Tag>
                    ))}
                  </TagGroup>
                )}
                <Text variant="body-small" color="secondary">
                  Created {formatDateTime(metadata.creationTimestamp)}
                  {target === undefined && ` · route ${spec.targetRef.name}`}
                </Text>
              </Flex>
            </CardBody>
          </Card>
        </Grid.Item>
        <Grid.Item>
          <Card>
            <CardHeader>
              <Text as="h3" variant="title-small" weight="bold">
                Docs and contact
              </Text>
            </CardHeader>
            <CardBody>
              <Flex direction="column" gap="2">
                {spec.documentation?.docsURL && (
                  <Link href={spec.documentation.docsURL} target="_blank" rel="noreferrer">
                    Documentation
                  </Link>
                )}
                {spec.documentation?.openAPISpecURL && (
                  <Link href={spec.documentation.openAPISpecURL} target="_blank" rel="noreferrer">
                    OpenAPI document
                  </Link>
                )}
                {spec.contact?.team && <Text>Team: {spec.contact.team}</Text>}
                {spec.contact?.email && (
                  <Link href={`mailto:${spec.contact.email}`}>{spec.contact.email}</Link>
                )}
                {spec.contact?.url && (
                  <Link href={spec.contact.url} target="_blank" rel="noreferrer">
                    Contact page
                  </Link>
                )}
                {!spec.documentation?.docsURL &&
                  !spec.documentation?.openAPISpecURL &&
                  !spec.contact?.team &&
                  !spec.contact?.email &&
                  !spec.contact?.url && <Text color="secondary">No docs or contact given.</Text>}
              </Flex>
            </CardBody>
          </Card>
        </Grid.Item>
      </Grid.Root>
      {target !== undefined ? (
        <McpProductSections
          product={product}
          target={target}
          withOwnAccess={mayRequest.allowed}
          withPeople={mayEdit}
          refreshKey={keysVersion}
        />
      ) : (
        <>
          <Flex direction="column" gap="2">
            <Text as="h3" variant="title-small" weight="bold">
              Plans
            </Text>
            <PlansTable plans={product.status?.plans ?? []} label="Plans" />
          </Flex>
          {mayRequest.allowed && (
            <Flex direction="column" gap="2">
              <Text as="h3" variant="title-small" weight="bold">
                Your keys
              </Text>
              <MyProductKeys product={product} refreshKey={keysVersion} />
              <Link href={paths.keys}>Manage your keys on My keys</Link>
            </Flex>
          )}
        </>
      )}
      {dialog === 'request' && (
        <RequestAccessDialog
          product={product}
          isOpen
          onOpenChange={open => setDialog(open ? 'request' : undefined)}
          onRequested={() => setKeysVersion(v => v + 1)}
        />
      )}
      {dialog === 'edit' && (
        <EditProductDialog
          product={product}
          isOpen
          onOpenChange={open => setDialog(open ? 'edit' : undefined)}
          onSaved={() => {
            setDialog(undefined);
            props.onChanged();
          }}
        />
      )}
      {dialog === 'delete' && (
        <DeleteProductDialog
          product={product}
          isOpen
          onOpenChange={open => setDialog(open ? 'delete' : undefined)}
          onDeleted={() => navigate(paths.catalog)}
        />
      )}
    </Flex>
  );
}
