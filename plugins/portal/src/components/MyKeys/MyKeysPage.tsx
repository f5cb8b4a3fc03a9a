/*
 * `/portal/keys`: the signed-in person's key requests (phase, plan, product, dates, the reviewer's
 * reason), paged through `/requests/my`. Pending ones can be edited or cancelled; an Approved key
 * whose secret was never read offers the one-time reveal; once read it says when.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Button,
  Cell,
  CellText,
  Dialog,
  DialogBody,
  DialogHeader,
  Flex,
  Text,
  type ColumnConfig,
} from '@backstage/ui';
import {
  portalApiKeyReadOwnPermission,
  type ApiKey,
  type ApiKeyPhase,
  type PageQuery,
} from '@devportal/plugin-portal-common';
import { useCallback, useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { usePagedTable } from '../../hooks/usePagedTable';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { formatDateTime, shortEntityRef } from '../shared/format';
import { PagedTable } from '../shared/PagedTable';
import { keyPhaseColumn, keyRowOf, type KeyRow } from '../shared/keyColumns';
import { PermissionGate } from '../shared/PermissionGate';
import { EmptyState } from '../shared/StateViews';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { EditRequestDialog } from './EditRequestDialog';
import { RevealSecretDialog } from './RevealSecretDialog';

type Action = { kind: 'reveal' | 'edit' | 'cancel'; key: ApiKey };

/** What a key's row says about its secret and review. */
function reviewText(key: ApiKey): string {
  const status = key.status;
  if (status === undefined || status.phase === 'Pending') return 'Waiting for an owner';
  const by = shortEntityRef(status.reviewedBy);
  return `${status.phase} by ${by} on ${formatDateTime(status.reviewedAt)}`;
}

/** The My keys page. */
export function MyKeysPage() {
  return (
    <PermissionGate permission={portalApiKeyReadOwnPermission} loading="your keys" what="API keys">
      <MyKeysList />
    </PermissionGate>
  );
}

function MyKeysList() {
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const load = useCallback((page: PageQuery) => portal.listMyRequests(page), [portal]);
  const table = usePagedTable({ load, toItem: keyRowOf });
  const [action, setAction] = useState<Action>();

  const columns: ColumnConfig<KeyRow>[] = [
    {
      id: 'product',
      label: 'Product',
      isRowHeader: true,
      cell: ({ key }) => (
        <CellText
          title={key.spec.apiProductRef.name}
          description={`${key.metadata.namespace}/${key.metadata.name}`}
          href={paths.product({
            namespace: key.metadata.namespace,
            name: key.spec.apiProductRef.name,
          })}
        />
      ),
    },
    { id: 'plan', label: 'Plan', cell: ({ key }) => <CellText title={key.spec.planTier} /> },
    keyPhaseColumn,
    {
      id: 'review',
      label: 'Review',
      cell: ({ key }) => (
        <CellText title={reviewText(key)} description={key.status?.reason ?? undefined} />
      ),
    },
    {
      id: 'dates',
      label: 'Requested',
      cell: ({ key }) => (
        <CellText
          title={formatDateTime(key.metadata.creationTimestamp)}
          description={
            key.spec.expiresAt ? `Expires ${formatDateTime(key.spec.expiresAt)}` : undefined
          }
        />
      ),
    },
    {
      id: 'actions',
      label: 'Actions',
      cell: ({ key }) => (
        <Cell>
          <KeyActions apiKey={key} onAction={setAction} />
        </Cell>
      ),
    },
  ];

  const finish = (changed: boolean) => {
    setAction(undefined);
    if (changed) table.reload();
  };
  return (
    <Flex direction="column" gap="4">
      <PagedTable
        label="My API keys"
        table={table}
        columns={columns}
        permission={portalApiKeyReadOwnPermission.name}
        emptyState={
          <EmptyState
            title="You have no API keys yet"
            description="Request access to an API product to get one."
          />
        }
      />
      {action?.kind === 'reveal' && (
        <RevealSecretDialog apiKey={action.key} isOpen onClose={finish} />
      )}
      {action?.kind === 'edit' && (
        <EditRequestDialog
          apiKey={action.key}
          isOpen
          onOpenChange={open => (open ? undefined : finish(false))}
          onSaved={() => finish(true)}
        />
      )}
      {action?.kind === 'cancel' && <DeleteKeyDialog apiKey={action.key} onClose={finish} />}
    </Flex>
  );
}

/** The actions a key's phase allows its requester. */
function KeyActions(props: { apiKey: ApiKey; onAction: (action: Action) => void }) {
  const { apiKey: key } = props;
  const phase = key.status?.phase;
  const name = key.metadata.name;
  if (phase === 'Pending') {
    return (
      <Flex gap="1">
        <Button
          size="small"
          variant="secondary"
          aria-label={`Edit request ${name}`}
          onPress={() => props.onAction({ kind: 'edit', key })}
        >
          Edit
        </Button>
        <Button
          size="small"
          variant="secondary"
          aria-label={`Cancel request ${name}`}
          onPress={() => props.onAction({ kind: 'cancel', key })}
        >
          Cancel
        </Button>
      </Flex>
    );
  }
  return (
    <Flex gap="1" align="center">
      {phase === 'Approved' && !key.status?.secretRevealed && (
        <Button
          size="small"
          variant="primary"
          aria-label={`Reveal secret of ${name}`}
          onPress={() => props.onAction({ kind: 'reveal', key })}
        >
          Reveal secret
        </Button>
      )}
      {phase === 'Approved' && key.status?.secretRevealed && (
        <Text variant="body-small" color="secondary">
          Revealed on {formatDateTime(key.status.secretRevealedAt)}
        </Text>
      )}
      <Button
        size="small"
        variant="secondary"
        aria-label={`${phase === 'Approved' ? 'Revoke' : 'Delete'} key ${name}`}
        onPress={() => props.onAction({ kind: 'cancel', key })}
      >
        {phase === 'Approved' ? 'Revoke' : 'Delete'}
      </Button>
    </Flex>
  );
}

const DELETE_VERBS: Record<ApiKeyPhase, string> = {
  Pending: 'Cancel request',
  Approved: 'Revoke key',
  Rejected: 'Delete key',
};
const DELETE_CONSEQUENCES: Record<ApiKeyPhase, string> = {
  Pending: 'The request is withdrawn; the owners will not see it any more.',
  Approved: 'The key stops working at once and its secret is deleted.',
  Rejected: 'The rejected request is removed from your list.',
};

/** Cancels a Pending request, or deletes (revokes) a decided key, after a confirmation. */
function DeleteKeyDialog(props: { apiKey: ApiKey; onClose: (changed: boolean) => void }) {
  const portal = useApi(portalApiRef);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<unknown>();
  const phaseKey = props.apiKey.status?.phase ?? 'Rejected';
  const verb = DELETE_VERBS[phaseKey];
  const remove = async () => {
    setDeleting(true);
    try {
      await portal.deleteRequest(props.apiKey.metadata);
      props.onClose(true);
    } catch (e) {
      setError(e);
      setDeleting(false);
    }
  };
  return (
    <Dialog isOpen onOpenChange={open => (open ? undefined : props.onClose(false))} width={480}>
      <DialogHeader>
        {verb} {props.apiKey.metadata.name}
      </DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="3">
          <Text>{DELETE_CONSEQUENCES[phaseKey]}</Text>
          <ErrorAlert title="Nothing was deleted" error={error} />
        </Flex>
      </DialogBody>
      <DialogActions
        cancelLabel="Keep it"
        onCancel={() => props.onClose(false)}
        actionLabel={verb}
        onAction={remove}
        isPending={deleting}
        destructive
      />
    </Dialog>
  );
}
