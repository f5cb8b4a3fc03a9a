/*
 * `/mcp/servers` — my servers' usage (contract mcp-access §8): each MCP server whose usage the
 * person may read (`mcp-broker.usage.read`: owners their servers, admins all), with its totals
 * for the period, linking to who uses it. Reads `GET /api/mcp-broker/usage/servers`.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Box, Flex, Table, Text, type ColumnConfig } from '@backstage/ui';
import {
  mcpBrokerUsageReadPermission,
  type McpServerUsageTotals,
} from '@devportal/plugin-mcp-broker-common';
import { useMemo } from 'react';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { useAppLinks, type AppLinks } from '../../hooks/useAppLinks';
import { useAsyncData } from '../../hooks/useAsyncData';
import { statusOf } from '../shared/errors';
import { shortEntityRef } from '../shared/format';
import { PortalStyles } from '../shared/PortalStyles';
import { readableColumns } from '../shared/readableColumns';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { PeriodPicker, usePeriod } from './PeriodPicker';
import { counterColumns, type CounterRow } from './usageColumns';

interface ServerRow extends CounterRow {
  totals: McpServerUsageTotals;
}

/** The servers' columns; a server links to who uses it over the same period. */
function serverColumns(links: AppLinks, days: number): ColumnConfig<ServerRow>[] {
  return readableColumns<ServerRow>([
    {
      id: 'server',
      label: 'Server',
      isRowHeader: true,
      cell: ({ totals }) => (
        <TextCell
          title={totals.server}
          href={`${links.mcpServerUsage(totals.server)}?days=${days}`}
          description={
            totals.owner === undefined ? undefined : `owner ${shortEntityRef(totals.owner)}`
          }
        />
      ),
    },
    {
      id: 'people',
      label: 'People',
      cell: ({ totals }) => <TextCell title={totals.people.toLocaleString('en')} />,
    },
    ...counterColumns<ServerRow>(),
  ]);
}

/** My servers' usage. */
export function ServerUsageListPage() {
  const broker = useApi(mcpBrokerApiRef);
  const links = useAppLinks();
  const [days, setDays] = usePeriod();
  const list = useAsyncData(() => broker.listServerUsage(days), [broker, days]);
  const columns = useMemo(() => serverColumns(links, days), [links, days]);
  let body;
  if (list.loading && list.value === undefined) body = <LoadingState what="your servers' usage" />;
  else if (list.error !== undefined) {
    body =
      statusOf(list.error) === 403 ? (
        <ForbiddenState what="MCP server usage" permission={mcpBrokerUsageReadPermission.name} />
      ) : (
        <ErrorState title="Server usage could not be loaded" error={list.error} />
      );
  } else {
    body = (
      <section aria-label="Servers">
        <Table
          columnConfig={columns}
          data={(list.value?.servers ?? []).map(totals => ({
            id: totals.server,
            totals,
            ...totals,
          }))}
          pagination={{ type: 'none' }}
          emptyState={
            <EmptyState
              title="No MCP server whose usage you may read"
              description="Owners of an MCP server (its config owner, or the registration's namespace owner) see its usage here."
            />
          }
        />
      </section>
    );
  }
  return (
    <Flex direction="column" gap="4" px="5" py="4">
      <PortalStyles />
      <Flex justify="between" align="end" gap="4">
        <Text as="h1" variant="title-medium" weight="bold">
          My servers' usage
        </Text>
        <Box style={{ minWidth: 180 }}>
          <PeriodPicker days={days} onChange={setDays} />
        </Box>
      </Flex>
      {body}
    </Flex>
  );
}
