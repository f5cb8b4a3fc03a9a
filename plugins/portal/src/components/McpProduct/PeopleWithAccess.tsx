/*
 * An MCP product's **People with access** (contract mcp-access §8), for its owners: the
 * product's Approved access requests (`GET /requests?namespace=&product=&status=Approved`,
 * paged on the server) with requester, plan, since when and until when, and **Revoke** with a
 * reason where `portal.apikey.approve` allows it on that request (the product's owners under
 * IS_PRODUCT_OWNER, asked with the request's resource ref) or `portal.apikey.delete.all` does.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Button, Cell, Flex, Text, type ColumnConfig } from '@backstage/ui';
import {
  portalApiKeyApprovePermission,
  portalApiKeyDeleteAllPermission,
  portalApiKeyReadOwnPermission,
  type ApiKey,
  type ApiProduct,
  type PageQuery,
} from '@devportal/plugin-portal-common';
import { useCallback, useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { usePagedTable } from '../../hooks/usePagedTable';
import { useDecision } from '../../hooks/usePermissions';
import { DeleteKeyDialog } from '../shared/DeleteKeyDialog';
import { formatDateTime, refText, shortEntityRef } from '../shared/format';
import { keyRowOf, type KeyRow } from '../shared/keyColumns';
import { PagedTable } from '../shared/PagedTable';
import { EmptyState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { isExpired } from './mcpAccess';

/** Revoke, for people the server would let revoke this request. */
function RevokeButton(props: { apiKey: ApiKey; onRevoke: (key: ApiKey) => void }) {
  const approve = useDecision(portalApiKeyApprovePermission, refText(props.apiKey.metadata));
  const deleteAll = useDecision(portalApiKeyDeleteAllPermission);
  if (!approve.allowed && !deleteAll.allowed) return null;
  const who = shortEntityRef(props.apiKey.spec.requestedBy.userId);
  return (
    <Button
      size="small"
      variant="secondary"
      aria-label={`Revoke access of ${who}`}
      onPress={() => props.onRevoke(props.apiKey)}
    >
      Revoke
    </Button>
  );
}

/** The people holding access to an MCP product, paged, with Revoke. */
export function PeopleWithAccess(props: { product: ApiProduct }) {
  const portal = useApi(portalApiRef);
  const { namespace, name } = props.product.metadata;
  const [revoking, setRevoking] = useState<ApiKey>();
  const load = useCallback(
    (page: PageQuery) =>
      portal.listRequests({ namespace, product: name, status: 'Approved', ...page }),
    [portal, namespace, name],
  );
  const table = usePagedTable({ load, toItem: keyRowOf });
  const columns: ColumnConfig<KeyRow>[] = [
    {
      id: 'requester',
      label: 'Person',
      isRowHeader: true,
      cell: ({ key }) => (
        <TextCell
          title={shortEntityRef(key.spec.requestedBy.userId)}
          description={key.spec.requestedBy.email}
        />
      ),
    },
    { id: 'plan', label: 'Plan', cell: ({ key }) => <TextCell title={key.spec.planTier} /> },
    {
      id: 'since',
      label: 'Since',
      cell: ({ key }) => <TextCell title={formatDateTime(key.status?.reviewedAt)} />,
    },
    {
      id: 'until',
      label: 'Until',
      cell: ({ key }) => (
        <TextCell
          title={
            key.spec.expiresAt === undefined ? 'No expiry' : formatDateTime(key.spec.expiresAt)
          }
          description={isExpired(key) ? 'Expired' : undefined}
        />
      ),
    },
    {
      id: 'actions',
      label: 'Actions',
      cell: ({ key }) => (
        <Cell>
          <RevokeButton apiKey={key} onRevoke={setRevoking} />
        </Cell>
      ),
    },
  ];
  return (
    <Flex direction="column" gap="2">
      <Text as="h3" variant="title-small" weight="bold">
        People with access
      </Text>
      <PagedTable
        label="People with access"
        table={table}
        columns={columns}
        permission={portalApiKeyReadOwnPermission.name}
        emptyState={
          <EmptyState
            title="Nobody has access yet"
            description="Approved access requests for this product appear here."
          />
        }
      />
      {revoking !== undefined && (
        <DeleteKeyDialog
          apiKey={revoking}
          othersKey
          viaRevoke
          consequence="Their access ends at once: the tools disappear from their MCP clients (a call already running finishes)."
          onClose={changed => {
            setRevoking(undefined);
            if (changed) table.reload();
          }}
        />
      )}
    </Flex>
  );
}
