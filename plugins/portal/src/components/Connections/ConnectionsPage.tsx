/*
 * My connections (`/connections` by default): the signed-in person's personal credentials for
 * MCP servers (`auth.mode: userCredential`) — each server that takes one, whether they stored
 * one and when, never a value (the broker has no way to return one) — with store, replace and
 * delete. The broker's URL elicitation links here when `mcpBroker.credentials.appPagePath` is
 * set: `<page>/<server>?elicitationId=…` opens the store dialog for that server, and the store
 * answers that elicitation, so the person's MCP client can call again.
 *
 * Storing needs `mcp-broker.session.create` (without it no MCP client of theirs could use the
 * credential, so the action is hidden); deleting one's own credential is always offered.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Alert, Box, Button, Cell, Flex, Table, Text, type ColumnConfig } from '@backstage/ui';
import { mcpBrokerSessionCreatePermission } from '@devportal/plugin-mcp-broker-common';
import { useState } from 'react';
import { Route, Routes, useParams, useSearchParams } from 'react-router-dom';
import { mcpBrokerApiRef, type McpConnection } from '../../apis/McpBrokerApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { useDecision } from '../../hooks/usePermissions';
import { formatDateTime } from '../shared/format';
import { PortalStyles } from '../shared/PortalStyles';
import { readableColumns } from '../shared/readableColumns';
import { EmptyState, ErrorState, LoadingState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { DeleteConnectionDialog } from './DeleteConnectionDialog';
import { StoreConnectionDialog } from './StoreConnectionDialog';

/** The My connections page, with its `:server` links (the app shows the page's title). */
export function ConnectionsPage() {
  return (
    <Box px="5" py="4">
      <PortalStyles />
      <Routes>
        <Route index element={<Connections />} />
        <Route path=":server" element={<Connections />} />
      </Routes>
    </Box>
  );
}

type Open =
  | { kind: 'store'; connection: McpConnection; elicitationId?: string }
  | { kind: 'delete'; server: string };

interface ConnectionRow {
  id: string;
  connection: McpConnection;
}

function stateText(connection: McpConnection): string {
  if (!connection.stored) return 'Not stored';
  return connection.inUse ? 'Stored' : 'Stored — the server no longer takes one (never used)';
}

function Connections() {
  const broker = useApi(mcpBrokerApiRef);
  const { server: linked } = useParams();
  const [search] = useSearchParams();
  const elicitationId = search.get('elicitationId') ?? undefined;
  const session = useDecision(mcpBrokerSessionCreatePermission);
  const connections = useAsyncData(() => broker.listConnections(), [broker]);
  const [open, setOpen] = useState<Open>();
  const [done, setDone] = useState<string>();
  // The link's server opens its store dialog once, when the list first arrives.
  const [linkHandled, setLinkHandled] = useState(false);
  const items = connections.value ?? [];
  const linkedConnection = items.find(c => c.server === linked && c.inUse);
  if (!linkHandled && linkedConnection !== undefined && session.allowed) {
    setLinkHandled(true);
    setOpen({ kind: 'store', connection: linkedConnection, elicitationId });
  }

  const closed = (message: string | undefined) => {
    setOpen(undefined);
    if (message !== undefined) {
      setDone(message);
      connections.reload();
    }
  };

  const columns: ColumnConfig<ConnectionRow>[] = [
    {
      id: 'server',
      label: 'MCP server',
      isRowHeader: true,
      cell: ({ connection }) => (
        <TextCell title={connection.server} description={connection.description} />
      ),
    },
    {
      id: 'state',
      label: 'Credential',
      cell: ({ connection }) => (
        <TextCell
          title={stateText(connection)}
          description={
            connection.createdAt === undefined
              ? undefined
              : `since ${formatDateTime(connection.createdAt)}`
          }
        />
      ),
    },
    {
      id: 'updated',
      label: 'Last changed',
      cell: ({ connection }) => <TextCell title={formatDateTime(connection.updatedAt) || '—'} />,
    },
    {
      id: 'actions',
      label: 'Actions',
      minWidth: 180,
      cell: ({ connection }) => (
        <Cell>
          <Flex gap="2" align="center">
            {connection.inUse && session.allowed && (
              <Button
                size="small"
                variant="secondary"
                aria-label={`${connection.stored ? 'Replace' : 'Store'} credential for ${connection.server}`}
                onPress={() => setOpen({ kind: 'store', connection })}
              >
                {connection.stored ? 'Replace' : 'Store'}
              </Button>
            )}
            {connection.stored && (
              <Button
                size="small"
                variant="secondary"
                destructive
                aria-label={`Delete credential for ${connection.server}`}
                onPress={() => setOpen({ kind: 'delete', server: connection.server })}
              >
                Delete
              </Button>
            )}
          </Flex>
        </Cell>
      ),
    },
  ];

  let body;
  if (connections.value === undefined && connections.loading)
    body = <LoadingState what="your connections" />;
  else if (connections.error !== undefined)
    body = <ErrorState title="Could not load your connections" error={connections.error} />;
  else
    body = (
      <Table
        columnConfig={readableColumns(columns)}
        data={items.map(connection => ({ id: connection.server, connection }))}
        pagination={{ type: 'none' }}
        emptyState={
          <EmptyState
            title="No MCP server takes a personal credential"
            description="Servers that act with your own account appear here once the broker's admins configure one."
          />
        }
      />
    );

  return (
    <Flex direction="column" gap="4">
      <Text>
        Some MCP servers act with your own account: the MCP broker presents your personal credential
        on your calls to them. Store it here once; nobody can read it back, not even you.
      </Text>
      {linked !== undefined && elicitationId !== undefined && done === undefined && (
        <Alert
          status="info"
          icon
          title={`Your MCP client sent you here to store your credential for ${linked}`}
          description="Once it is stored, go back to your MCP client and call the tool again."
        />
      )}
      {linked !== undefined &&
        connections.value !== undefined &&
        linkedConnection === undefined && (
          <Alert
            status="warning"
            icon
            title={`No MCP server "${linked}" takes a personal credential`}
            description="The link may be for a server that was removed or renamed."
          />
        )}
      {done !== undefined && <Alert status="success" icon role="status" title={done} />}
      <section aria-label="Your connections">{body}</section>
      {open?.kind === 'store' && (
        <StoreConnectionDialog
          connection={open.connection}
          elicitationId={open.elicitationId}
          onClose={stored =>
            closed(
              stored
                ? `Stored your credential for ${open.connection.server}.${
                    open.elicitationId === undefined
                      ? ''
                      : ' Go back to your MCP client and call the tool again.'
                  }`
                : undefined,
            )
          }
        />
      )}
      {open?.kind === 'delete' && (
        <DeleteConnectionDialog
          server={open.server}
          onClose={deleted =>
            closed(deleted ? `Deleted your credential for ${open.server}.` : undefined)
          }
        />
      )}
    </Flex>
  );
}
