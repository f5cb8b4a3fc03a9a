/*
 * `/portal/keys`: the signed-in person's key requests (phase, plan, product, dates, the reviewer's
 * reason), paged through `/requests/my`. Pending ones can be edited or cancelled; an Approved key
 * whose secret was never read offers the one-time reveal; once read it says when. Access requests
 * of MCP products (contract mcp-access §8) are of the kind "MCP access": no secret to reveal,
 * links to the MCP tools and My MCP usage while live, "Expired" once their expiry has passed.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Button, Cell, Flex, Link, Text, type ColumnConfig } from '@backstage/ui';
import {
  portalApiKeyReadOwnPermission,
  type ApiKey,
  type PageQuery,
} from '@devportal/plugin-portal-common';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { useAppLinks } from '../../hooks/useAppLinks';
import { usePagedTable } from '../../hooks/usePagedTable';
import { DeleteKeyDialog } from '../shared/DeleteKeyDialog';
import { formatDateTime } from '../shared/format';
import { PagedTable } from '../shared/PagedTable';
import { keyPhaseColumn, keyReviewText, keyRowOf } from '../shared/keyColumns';
import {
  grantedTargetText,
  keyKindOf,
  withProducts,
  type KeyWithProduct,
  type ProductCache,
} from '../shared/keyProducts';
import { isExpired } from '../McpProduct/mcpAccess';
import { PermissionGate } from '../shared/PermissionGate';
import { EmptyState } from '../shared/StateViews';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { EditRequestDialog } from './EditRequestDialog';
import { RevealSecretDialog } from './RevealSecretDialog';
import { TextCell } from '../shared/TextCell';

type Action = { kind: 'reveal' | 'edit' | 'cancel'; key: ApiKey; mcp: boolean };

/** What cancelling an MCP access request means (it has no secret to delete). */
const MCP_CANCEL_CONSEQUENCE =
  'Your access ends at once: the tools disappear from your MCP clients.';

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
  const products = useMemo<ProductCache>(() => new Map(), []);
  const keep = useCallback(
    (rows: KeyWithProduct[]) => withProducts(portal, rows, products),
    [portal, products],
  );
  const table = usePagedTable<ApiKey, KeyWithProduct>({ load, toItem: keyRowOf, keep });
  const [action, setAction] = useState<Action>();
  // The key whose secret was just revealed: its reveal button (which opened the dialog and would
  // get focus back) is gone, so focus goes to the key's remaining action instead of the page.
  const [revealedKey, setRevealedKey] = useState<string>();

  const columns: ColumnConfig<KeyWithProduct>[] = [
    {
      id: 'product',
      label: 'Product',
      isRowHeader: true,
      cell: ({ key }) => (
        <TextCell
          title={key.spec.apiProductRef.name}
          description={`${key.metadata.namespace}/${key.metadata.name}`}
          href={paths.product({
            namespace: key.metadata.namespace,
            name: key.spec.apiProductRef.name,
          })}
        />
      ),
    },
    {
      id: 'kind',
      label: 'Kind',
      cell: ({ product }) => (
        <TextCell title={keyKindOf(product) ?? '—'} description={grantedTargetText(product)} />
      ),
    },
    { id: 'plan', label: 'Plan', cell: ({ key }) => <TextCell title={key.spec.planTier} /> },
    keyPhaseColumn,
    {
      id: 'review',
      label: 'Review',
      cell: ({ key }) => (
        <TextCell title={keyReviewText(key)} description={key.status?.reason ?? undefined} />
      ),
    },
    {
      id: 'dates',
      label: 'Requested',
      cell: ({ key }) => (
        <TextCell
          title={formatDateTime(key.metadata.creationTimestamp)}
          description={
            key.spec.expiresAt
              ? `${isExpired(key) ? 'Expired on' : 'Expires'} ${formatDateTime(key.spec.expiresAt)}`
              : undefined
          }
        />
      ),
    },
    {
      id: 'actions',
      label: 'Actions',
      // Room for the widest button ("Reveal secret") with the cell's padding.
      minWidth: 150,
      cell: ({ key, product }) => (
        <Cell>
          <KeyActions
            apiKey={key}
            mcpServer={
              product !== undefined && keyKindOf(product) === 'MCP access'
                ? product.spec.targetRef.name
                : undefined
            }
            onAction={setAction}
            focusRevoke={revealedKey === key.metadata.uid}
          />
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
        <RevealSecretDialog
          apiKey={action.key}
          isOpen
          onClose={revealed => {
            if (revealed) setRevealedKey(action.key.metadata.uid);
            finish(revealed);
          }}
        />
      )}
      {action?.kind === 'edit' && (
        <EditRequestDialog
          apiKey={action.key}
          isOpen
          onOpenChange={open => (open ? undefined : finish(false))}
          onSaved={() => finish(true)}
        />
      )}
      {action?.kind === 'cancel' && (
        <DeleteKeyDialog
          apiKey={action.key}
          onClose={finish}
          consequence={
            action.mcp && action.key.status?.phase === 'Approved'
              ? MCP_CANCEL_CONSEQUENCE
              : undefined
          }
        />
      )}
    </Flex>
  );
}

/**
 * The actions a key's phase allows its requester. With `focusRevoke`, the revoke button takes
 * focus once the reveal button is gone. An MCP access request (`mcpServer`) has no secret: it
 * links to the person's tools and usage while live instead.
 */
function KeyActions(props: {
  apiKey: ApiKey;
  /** The MCP server an access request grants; absent for an API key. */
  mcpServer?: string;
  onAction: (action: Action) => void;
  focusRevoke: boolean;
}) {
  const { apiKey: key, focusRevoke, mcpServer } = props;
  const links = useAppLinks();
  const mcp = mcpServer !== undefined;
  const phase = key.status?.phase;
  const name = key.metadata.name;
  const expired = isExpired(key);
  const offersReveal = phase === 'Approved' && !mcp && !key.status?.secretRevealed;
  const revokeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (focusRevoke && !offersReveal) revokeRef.current?.focus();
  }, [focusRevoke, offersReveal]);
  if (phase === 'Pending') {
    return (
      <Flex gap="1" style={{ flexWrap: 'wrap' }}>
        <Button
          size="small"
          variant="secondary"
          aria-label={`Edit request ${name}`}
          onPress={() => props.onAction({ kind: 'edit', key, mcp })}
        >
          Edit
        </Button>
        <Button
          size="small"
          variant="secondary"
          aria-label={`Cancel request ${name}`}
          onPress={() => props.onAction({ kind: 'cancel', key, mcp })}
        >
          Cancel
        </Button>
      </Flex>
    );
  }
  // Wraps rather than pushing a button out of its cell on narrow tables.
  return (
    <Flex gap="1" align="center" style={{ flexWrap: 'wrap' }}>
      {offersReveal && (
        <Button
          size="small"
          variant="primary"
          aria-label={`Reveal secret of ${name}`}
          onPress={() => props.onAction({ kind: 'reveal', key, mcp })}
        >
          Reveal secret
        </Button>
      )}
      {expired && <Text weight="bold">Expired</Text>}
      {mcp && phase === 'Approved' && !expired && (
        <>
          <Link href={links.mcpServer(mcpServer)}>MCP tools</Link>
          <Link href={links.mcpUsage}>My MCP usage</Link>
        </>
      )}
      {phase === 'Approved' && !mcp && key.status?.secretRevealed && (
        <Text variant="body-small" color="secondary">
          Revealed on {formatDateTime(key.status.secretRevealedAt)}
        </Text>
      )}
      <Button
        ref={revokeRef}
        size="small"
        variant="secondary"
        aria-label={`${phase === 'Approved' ? 'Revoke' : 'Delete'} key ${name}`}
        onPress={() => props.onAction({ kind: 'cancel', key, mcp })}
      >
        {phase === 'Approved' ? 'Revoke' : 'Delete'}
      </Button>
    </Flex>
  );
}
