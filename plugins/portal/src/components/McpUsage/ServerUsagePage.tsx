/*
 * `/mcp/servers/:server/usage` — who uses my server (contract mcp-access §8): calls per day
 * stacked by tool with errors as a line and the same numbers as a table, then **People**: each
 * principal (linked to their user entity) with calls, errors, rate-limited, last day, plan and
 * expiry, by calls, a page at a time. Needs `mcp-broker.usage.read` on the server; reads
 * `GET /api/mcp-broker/usage/servers/:server`.
 *
 * The broker answers the chart's series with every page of people; the page keeps the series of
 * the first page (read once, as the table's first page loads) and lets the portal's paged table
 * walk the people.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Box, Flex, Text, type ColumnConfig } from '@backstage/ui';
import {
  mcpBrokerUsageReadPermission,
  type McpServerUsage,
  type McpServerUsagePerson,
} from '@devportal/plugin-mcp-broker-common';
import type { PageQuery } from '@devportal/plugin-portal-common';
import { useCallback, useMemo, useState } from 'react';
import { useParams } from 'react-router-dom';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { useAppLinks, type AppLinks } from '../../hooks/useAppLinks';
import { usePagedTable } from '../../hooks/usePagedTable';
import { statusOf } from '../shared/errors';
import { formatDateTime, shortEntityRef } from '../shared/format';
import { PagedTable } from '../shared/PagedTable';
import { PortalStyles } from '../shared/PortalStyles';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { UsageChart } from '../shared/UsageChart';
import { PeriodPicker, usePeriod } from './PeriodPicker';
import { counterColumns, type CounterRow } from './usageColumns';
import { daysBetween, seriesBy, totalSeries } from './usageSeries';

/** People per page. */
const PAGE = 50;

interface PersonRow extends CounterRow {
  person: McpServerUsagePerson;
}

const personRowOf = (person: McpServerUsagePerson): PersonRow => ({
  id: person.principal,
  person,
  ...person,
});

/** What the people's list is loaded for; a new one (another server or period) starts over. */
interface UsageQuery {
  server: string;
  days: number;
}

function personColumns(links: AppLinks): ColumnConfig<PersonRow>[] {
  return [
    {
      id: 'principal',
      label: 'Person',
      isRowHeader: true,
      cell: ({ person }) =>
        person.principal.startsWith('user:') ? (
          <TextCell
            title={shortEntityRef(person.principal)}
            href={links.entity(person.principal)}
          />
        ) : (
          <TextCell title={person.principal} />
        ),
    },
    ...counterColumns<PersonRow>(),
    { id: 'lastDay', label: 'Last day', cell: ({ person }) => <TextCell title={person.lastDay} /> },
    {
      id: 'plan',
      label: 'Plan',
      cell: ({ person }) => (
        <TextCell
          title={
            person.grants.length === 0
              ? '—'
              : person.grants.map(grant => `${grant.title}: ${grant.plan}`).join(', ')
          }
          description={person.grants
            .filter(grant => grant.expiresAt !== undefined)
            .map(grant => `expires ${formatDateTime(grant.expiresAt)}`)
            .join(', ')}
        />
      ),
    },
  ];
}

/** Who uses one MCP server. */
export function ServerUsagePage() {
  const { server = '' } = useParams();
  const broker = useApi(mcpBrokerApiRef);
  const links = useAppLinks();
  const [days, setDays] = usePeriod();
  const query = useMemo<UsageQuery>(() => ({ server, days }), [server, days]);
  // The first page's answer (series, owner, period) for the query it was loaded for.
  const [first, setFirst] = useState<{ query: UsageQuery; usage: McpServerUsage }>();
  const load = useCallback(
    async (page: PageQuery, asked: UsageQuery | undefined) => {
      const { server: name, days: period } = asked ?? query;
      const usage = await broker.getServerUsage(name, {
        days: period,
        limit: page.limit,
        ...(page.continue === undefined ? {} : { continue: page.continue }),
      });
      if (page.continue === undefined) setFirst({ query: asked ?? query, usage });
      return { items: usage.people, metadata: usage.metadata };
    },
    [broker, query],
  );
  const table = usePagedTable({ load, toItem: personRowOf, filter: query, pageSize: PAGE });
  const columns = useMemo(() => personColumns(links), [links]);
  const usage = first?.query === query ? first.usage : undefined;
  const error = table.tableProps.error;
  let body;
  if (usage === undefined && error !== undefined) {
    body =
      statusOf(error) === 403 ? (
        <ForbiddenState
          what={`the usage of MCP server ${server}`}
          permission={mcpBrokerUsageReadPermission.name}
        />
      ) : (
        <ErrorState title={`The usage of ${server} could not be loaded`} error={error} />
      );
  } else if (usage === undefined) {
    body = <LoadingState what={`usage of ${server}`} />;
  } else if (usage.series.length === 0) {
    body = <EmptyState title={`Nobody called a tool of ${server} in this period`} />;
  } else {
    const period = daysBetween(usage.from, usage.to);
    body = (
      <Flex direction="column" gap="5">
        <section aria-label="Calls per day">
          <UsageChart
            title={`Calls of ${server} per day by tool, ${usage.from} to ${usage.to}`}
            days={period}
            stacks={seriesBy(
              usage.series,
              period,
              row => row.tool,
              row => row.calls,
            )}
            line={totalSeries('Errors', usage.series, period, row => row.errors)}
          />
        </section>
        <Flex direction="column" gap="2">
          <Text as="h2" variant="title-small" weight="bold">
            People
          </Text>
          <PagedTable
            label="People"
            table={table}
            columns={columns}
            permission={mcpBrokerUsageReadPermission.name}
            emptyState={<EmptyState title="Nobody on this page" />}
          />
        </Flex>
      </Flex>
    );
  }
  return (
    <Flex direction="column" gap="4" px="5" py="4">
      <PortalStyles />
      <Flex justify="between" align="end" gap="4">
        <Flex direction="column" gap="1">
          <Text as="h1" variant="title-medium" weight="bold">
            Who uses {server}
          </Text>
          {usage?.owner !== undefined && (
            <Text color="secondary">owner {shortEntityRef(usage.owner)}</Text>
          )}
        </Flex>
        <Box style={{ minWidth: 180 }}>
          <PeriodPicker days={days} onChange={setDays} />
        </Box>
      </Flex>
      {body}
    </Flex>
  );
}
