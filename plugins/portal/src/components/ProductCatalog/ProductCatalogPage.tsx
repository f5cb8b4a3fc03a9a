/*
 * `/portal`: the API products the person may read (Published ones; owners also see their Drafts,
 * marked), searchable by name and tag, paged through the API's `continue`. People who may create
 * products get the way in to product management.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  ButtonLink,
  Cell,
  Flex,
  SearchField,
  TagGroup,
  Tag,
  Text,
  type ColumnConfig,
} from '@backstage/ui';
import {
  portalApiProductCreatePermission,
  portalApiProductListPermission,
  type ApiProduct,
  type PageQuery,
} from '@devportal/plugin-portal-common';
import { useCallback } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { useDecision } from '../../hooks/usePermissions';
import { usePagedTable } from '../../hooks/usePagedTable';
import { formatDateTime, refText } from '../shared/format';
import { PagedTable } from '../shared/PagedTable';
import { PublishBadge } from '../shared/PhaseBadge';
import { PermissionGate } from '../shared/PermissionGate';
import { EmptyState } from '../shared/StateViews';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { TextCell } from '../shared/TextCell';

interface ProductRow {
  id: string;
  product: ApiProduct;
}

const toRow = (product: ApiProduct): ProductRow => ({ id: refText(product.metadata), product });

/** Whether a product's name, display name or a tag contains the (lower-case) search text. */
export function productMatches(row: ProductRow, search: string): boolean {
  const { metadata, spec } = row.product;
  return [metadata.name, spec.displayName, ...(spec.tags ?? [])].some(text =>
    text.toLowerCase().includes(search),
  );
}

/** The product catalog page. */
export function ProductCatalogPage() {
  return (
    <PermissionGate
      permission={portalApiProductListPermission}
      loading="API products"
      what="API products"
    >
      <ProductList />
    </PermissionGate>
  );
}

function ProductList() {
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const create = useDecision(portalApiProductCreatePermission);
  const load = useCallback((page: PageQuery) => portal.listApiProducts(page), [portal]);
  const table = usePagedTable({ load, toItem: toRow, matches: productMatches });

  const columns: ColumnConfig<ProductRow>[] = [
    {
      id: 'name',
      label: 'API product',
      isRowHeader: true,
      cell: ({ product }) => (
        <TextCell
          title={product.spec.displayName}
          description={product.spec.description}
          markdown
          href={paths.product(product.metadata)}
        />
      ),
    },
    {
      id: 'status',
      label: 'Status',
      cell: ({ product }) => (
        <Cell>
          <PublishBadge status={product.spec.publishStatus} />
        </Cell>
      ),
    },
    {
      id: 'version',
      label: 'Version',
      cell: ({ product }) => <TextCell title={product.spec.version ?? '—'} />,
    },
    {
      id: 'tags',
      label: 'Tags',
      cell: ({ product }) => (
        <Cell>
          {(product.spec.tags ?? []).length === 0 ? (
            <Text color="secondary">—</Text>
          ) : (
            <TagGroup aria-label={`Tags of ${product.spec.displayName}`}>
              {(product.spec.tags ?? []).map(tag => (
                <Tag key={tag} id={tag} size="small">
                  {tag}
                </Tag>
              ))}
            </TagGroup>
          )}
        </Cell>
      ),
    },
    {
      id: 'namespace',
      label: 'Namespace',
      cell: ({ product }) => <TextCell title={product.metadata.namespace} />,
    },
    {
      id: 'created',
      label: 'Created',
      cell: ({ product }) => (
        <TextCell title={formatDateTime(product.metadata.creationTimestamp)} />
      ),
    },
  ];

  return (
    <Flex direction="column" gap="4">
      <Flex justify="between" align="end" gap="4">
        <SearchField
          label="Search by name or tag"
          value={table.search.value}
          onChange={table.search.onChange}
        />
        {create.allowed && (
          <ButtonLink href={paths.newProduct()} variant="primary">
            Create API product
          </ButtonLink>
        )}
      </Flex>
      <PagedTable
        label="API products"
        table={table}
        columns={columns}
        permission={portalApiProductListPermission.name}
        emptyState={
          <EmptyState
            title={
              table.search.value === ''
                ? 'No API products yet'
                : `No API product matches "${table.search.value}"`
            }
            description={
              table.search.value === ''
                ? 'Published API products appear here.'
                : 'Try another name or tag.'
            }
          />
        }
      />
    </Flex>
  );
}
