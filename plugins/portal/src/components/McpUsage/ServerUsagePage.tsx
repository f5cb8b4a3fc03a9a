/*
 * `/mcp/servers/:server/usage` — who uses my server (contract mcp-access §8): calls per day
 * stacked by tool with errors as a line and the same numbers as a table, then **People**: each
 * principal (linked to their user entity) with calls, errors, rate-limited, last day, plan and
 * expiry, by calls, a page at a time. Needs `mcp-broker.usage.read` on the server; reads
 * `GET /api/mcp-broker/usage/servers/:server`.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Box, Button, Flex, Table, Text } from '@backstage/ui';
import {
  mcpBrokerUsageReadPermission,
  type McpServerUsage,
  type McpServerUsagePerson,
} from '@devportal/plugin-mcp-broker-common';
import { useEffect, useState } from 'react';
import { useParams } from 'react-router-dom';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { useAppLinks } from '../../hooks/useAppLinks';
import { useAsyncData } from '../../hooks/useAsyncData';
import { statusOf } from '../shared/errors';
import { formatDateTime, shortEntityRef } from '../shared/format';
import { PortalStyles } from '../shared/PortalStyles';
import { readableColumns } from '../shared/readableColumns';
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

/** Who uses one MCP server. */
export function ServerUsagePage() {
  const { server = '' } = useParams();
  const broker = useApi(mcpBrokerApiRef);
  const links = useAppLinks();
  const [days, setDays] = usePeriod();
  const first = useAsyncData(
    () => broker.getServerUsage(server, { days, limit: PAGE }),
    [broker, server, days],
  );
  // Later pages of people, appended by "More people" (the chart comes with the first page).
  const [more, setMore] = useState<{ people: McpServerUsagePerson[]; next?: string }>();
  const [moreError, setMoreError] = useState<unknown>();
  useEffect(() => {
    setMore(undefined);
    setMoreError(undefined);
  }, [first.value]);
  const columns = readableColumns<PersonRow>([
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
  ]);
  const loadMore = async (usage: McpServerUsage) => {
    const token = more?.next ?? usage.metadata.continue;
    if (token === undefined) return;
    try {
      const next = await broker.getServerUsage(server, { days, limit: PAGE, continue: token });
      setMore(previous => ({
        people: [...(previous?.people ?? []), ...next.people],
        next: next.metadata.continue,
      }));
    } catch (error) {
      setMoreError(error);
    }
  };
  let body;
  if (first.loading && first.value === undefined)
    body = <LoadingState what={`usage of ${server}`} />;
  else if (first.error !== undefined) {
    body =
      statusOf(first.error) === 403 ? (
        <ForbiddenState
          what={`the usage of MCP server ${server}`}
          permission={mcpBrokerUsageReadPermission.name}
        />
      ) : (
        <ErrorState title={`The usage of ${server} could not be loaded`} error={first.error} />
      );
  } else if (first.value !== undefined) {
    const usage = first.value;
    const period = daysBetween(usage.from, usage.to);
    const people = [...usage.people, ...(more?.people ?? [])];
    const hasMore =
      more === undefined ? usage.metadata.continue !== undefined : more.next !== undefined;
    body =
      usage.series.length === 0 ? (
        <EmptyState title={`Nobody called a tool of ${server} in this period`} />
      ) : (
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
          <section aria-label="People">
            <Text as="h2" variant="title-small" weight="bold">
              People
            </Text>
            <Table
              columnConfig={columns}
              data={people.map(person => ({ id: person.principal, person, ...person }))}
              pagination={{ type: 'none' }}
            />
            {moreError !== undefined && (
              <ErrorState title="More people could not be loaded" error={moreError} />
            )}
            {hasMore && (
              <Button variant="secondary" onPress={() => loadMore(usage)}>
                More people
              </Button>
            )}
          </section>
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
          {first.value?.owner !== undefined && (
            <Text color="secondary">owner {shortEntityRef(first.value.owner)}</Text>
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
