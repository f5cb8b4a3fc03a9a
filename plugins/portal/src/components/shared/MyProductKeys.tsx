/*
 * The signed-in person's own keys for one product (phase, plan, dates), read page by page from
 * `/requests/my` in the product's namespace. Managing them (reveal, edit, cancel) is on My keys.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Table, type ColumnConfig } from '@backstage/ui';
import type { ReactNode } from 'react';
import type { ApiKey, ApiProduct } from '@devportal/plugin-portal-common';
import { portalApiRef, type PortalApi } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { formatDateTime } from './format';
import { productKeysIn } from './productKeysIn';
import { keyPhaseColumn, keyRowOf, type KeyRow } from './keyColumns';
import { EmptyState, ErrorState, LoadingState } from './StateViews';
import { TextCell } from './TextCell';
import { readableColumns } from './readableColumns';

/** The caller's keys of `product`, walking every page of their own requests in its namespace. */
export async function myKeysOf(portal: PortalApi, product: ApiProduct): Promise<ApiKey[]> {
  return productKeysIn(
    portal.listMyRequestsPages({ namespace: product.metadata.namespace }),
    product,
  );
}

const columns: ColumnConfig<KeyRow>[] = [
  {
    id: 'plan',
    label: 'Plan',
    isRowHeader: true,
    cell: ({ key }) => <TextCell title={key.spec.planTier} description={key.metadata.name} />,
  },
  keyPhaseColumn,
  {
    id: 'requested',
    label: 'Requested',
    cell: ({ key }) => <TextCell title={formatDateTime(key.metadata.creationTimestamp)} />,
  },
];

/** Props of {@link MyProductKeys}. */
export interface MyProductKeysProps {
  product: ApiProduct;
  /** A change reloads the keys (after a new request). */
  refreshKey?: number;
  /** Said when there are none; "You have no key for this product yet" unless given. */
  emptyTitle?: string;
  /** What the keys mean, shown above them once loaded (an MCP product's live access). */
  summary?: (keys: ApiKey[]) => ReactNode;
}

/** The caller's keys of one product. */
export function MyProductKeys(props: MyProductKeysProps) {
  const portal = useApi(portalApiRef);
  const keys = useAsyncData(
    () => myKeysOf(portal, props.product),
    [portal, props.product, props.refreshKey],
  );
  if (keys.value === undefined && keys.loading) return <LoadingState what="your keys" />;
  if (keys.error !== undefined) {
    return <ErrorState title="Could not load your keys" error={keys.error} />;
  }
  return (
    <section aria-label={`Your keys for ${props.product.spec.displayName}`}>
      {props.summary?.(keys.value ?? [])}
      <Table
        columnConfig={readableColumns(columns)}
        data={(keys.value ?? []).map(keyRowOf)}
        pagination={{ type: 'none' }}
        emptyState={
          <EmptyState title={props.emptyTitle ?? 'You have no key for this product yet'} />
        }
      />
    </section>
  );
}
