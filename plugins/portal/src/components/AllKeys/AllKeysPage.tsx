/*
 * `/portal/all-keys`: every API key a person oversees — for a portal admin (`portal.apikey.read.all`)
 * every key, for an API owner the keys of the products they (or their groups) own — filtered by
 * namespace and product, the product's owner, the requester and the phase, on the server
 * (`GET /requests`, docs/contracts/portal-admin-keys.md) and page by page. Holders of
 * `portal.apikey.delete.all` revoke (delete) keys here; an owner's view is read-only, as the
 * server lets only the requester or an admin delete a key.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Button, Cell, Flex, Select, TextField, type ColumnConfig } from '@backstage/ui';
import {
  portalApiKeyDeleteAllPermission,
  portalApiKeyReadAllPermission,
  portalApiKeyReadOwnPermission,
  type ApiKey,
  type ApiKeyPhase,
  type PageQuery,
} from '@devportal/plugin-portal-common';
import { useCallback, useMemo, useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { useOwnership } from '../../hooks/useOwnership';
import { usePagedTable } from '../../hooks/usePagedTable';
import { useDecision, useScopedDecision } from '../../hooks/usePermissions';
import { useReviewerRole } from '../../hooks/useReviewerRole';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { DeleteKeyDialog } from '../shared/DeleteKeyDialog';
import { formatDateTime, shortEntityRef } from '../shared/format';
import { keyPhaseColumn, keyReviewText, keyRowOf, type KeyRow } from '../shared/keyColumns';
import { PagedTable } from '../shared/PagedTable';
import { NothingToReview } from '../Reviewer/NothingToReview';
import { EmptyState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { EMPTY_KEY_LIST_FILTER, keyListQuery, type KeyListFilter } from './keyListFilter';

const PHASE_OPTIONS = [
  { id: 'any', label: 'Any phase' },
  { id: 'Pending', label: 'Pending' },
  { id: 'Approved', label: 'Approved' },
  { id: 'Rejected', label: 'Rejected' },
];

/** The All keys page. */
export function AllKeysPage() {
  const read = useScopedDecision(portalApiKeyReadOwnPermission, portalApiKeyReadAllPermission);
  const role = useReviewerRole();
  const ownership = useOwnership();
  const ownerRefs = useMemo(
    () => (ownership === undefined ? undefined : [...ownership.refs]),
    [ownership],
  );
  if (read.loading || role === undefined || ownerRefs === undefined) {
    return <LoadingState what="API keys" />;
  }
  if (!read.own && !read.all) {
    return <ForbiddenState what="API keys" permission={portalApiKeyReadAllPermission.name} />;
  }
  if (!read.all && role === 'none') {
    return (
      <NothingToReview
        title="No keys for you to oversee"
        description="This page lists the keys of the API products you own, and every key for portal admins. You own no API product; your own keys are on My keys."
      />
    );
  }
  return <KeyList ownerRefs={read.all ? undefined : ownerRefs} />;
}

/** The filters and the table; `ownerRefs` fixes an owner's view to their products. */
function KeyList(props: { ownerRefs?: string[] }) {
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const mayDelete = useDecision(portalApiKeyDeleteAllPermission);
  const [form, setForm] = useState<KeyListFilter>(EMPTY_KEY_LIST_FILTER);
  const [revoking, setRevoking] = useState<ApiKey>();
  const set = (field: keyof KeyListFilter) => (value: string) =>
    setForm(current => ({ ...current, [field]: value }));
  // A string, so that the table reloads when the query changes, not on every render.
  const query = JSON.stringify(keyListQuery(form, props.ownerRefs));
  const load = useCallback(
    (page: PageQuery, filter: string | undefined) =>
      portal.listRequests({ ...JSON.parse(filter ?? '{}'), ...page }),
    [portal],
  );
  const table = usePagedTable({ load, toItem: keyRowOf, filter: query });

  const columns: ColumnConfig<KeyRow>[] = [
    {
      id: 'key',
      label: 'Key',
      isRowHeader: true,
      minWidth: 150,
      cell: ({ key }) => (
        <TextCell title={key.metadata.name} description={key.metadata.namespace} />
      ),
    },
    {
      id: 'product',
      label: 'Product',
      minWidth: 120,
      cell: ({ key }) => (
        <TextCell
          title={key.spec.apiProductRef.name}
          description={`Plan ${key.spec.planTier}`}
          href={paths.product({
            namespace: key.metadata.namespace,
            name: key.spec.apiProductRef.name,
          })}
        />
      ),
    },
    {
      id: 'requester',
      label: 'Requested by',
      minWidth: 110,
      cell: ({ key }) => (
        <TextCell
          title={shortEntityRef(key.spec.requestedBy.userId)}
          description={formatDateTime(key.metadata.creationTimestamp)}
        />
      ),
    },
    { ...keyPhaseColumn, minWidth: 100 },
    {
      id: 'review',
      label: 'Review',
      minWidth: 160,
      cell: ({ key }) => (
        <TextCell title={keyReviewText(key)} description={key.status?.reason ?? undefined} />
      ),
    },
    ...(mayDelete.allowed
      ? [
          {
            id: 'actions',
            label: 'Actions',
            minWidth: 110,
            cell: ({ key }: KeyRow) => (
              <Cell>
                <Button
                  size="small"
                  variant="secondary"
                  aria-label={`${key.status?.phase === 'Approved' ? 'Revoke' : 'Delete'} key ${key.metadata.name}`}
                  onPress={() => setRevoking(key)}
                >
                  {key.status?.phase === 'Approved' ? 'Revoke' : 'Delete'}
                </Button>
              </Cell>
            ),
          },
        ]
      : []),
  ];

  return (
    <Flex direction="column" gap="4">
      <Flex gap="3" align="end" style={{ flexWrap: 'wrap' }}>
        <TextField label="Namespace" value={form.namespace} onChange={set('namespace')} />
        <TextField
          label="Product"
          description={form.namespace.trim() === '' ? 'Needs the namespace' : undefined}
          value={form.product}
          onChange={set('product')}
        />
        {props.ownerRefs === undefined && (
          <TextField
            label="Product owner"
            description="e.g. group:payments-team, bob"
            value={form.owner}
            onChange={set('owner')}
          />
        )}
        <TextField
          label="Requested by"
          description="e.g. alice"
          value={form.requester}
          onChange={set('requester')}
        />
        <Select
          label="Phase"
          options={PHASE_OPTIONS}
          value={form.phase === '' ? 'any' : form.phase}
          onChange={key => set('phase')(key === 'any' ? '' : (String(key) as ApiKeyPhase))}
        />
      </Flex>
      <PagedTable
        label="API keys"
        table={table}
        columns={columns}
        permission={portalApiKeyReadAllPermission.name}
        emptyState={
          <EmptyState
            title="No API keys match"
            description="Keys appear here once people request access to the products."
          />
        }
      />
      {revoking !== undefined && (
        <DeleteKeyDialog
          apiKey={revoking}
          othersKey
          onClose={changed => {
            setRevoking(undefined);
            if (changed) table.reload();
          }}
        />
      )}
    </Flex>
  );
}
