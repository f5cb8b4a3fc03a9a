/*
 * `/mcp/usage` — My MCP usage (contract mcp-access §8): the person's own tool calls per day by
 * server (errors and rate-limited as a line and in the table), per server and tool, and
 * "Your plans": each live access grant with a meter per quota ("3 of 5 per day (UTC)"), the
 * window's end, the expiry and where to manage it. Reads `GET /api/mcp-broker/usage/my`.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Box, Card, CardBody, CardHeader, Flex, Link, Table, Text } from '@backstage/ui';
import {
  mcpBrokerSessionCreatePermission,
  type McpUsageGrant,
} from '@devportal/plugin-mcp-broker-common';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { useAppLinks } from '../../hooks/useAppLinks';
import { useAsyncData } from '../../hooks/useAsyncData';
import { useDecision } from '../../hooks/usePermissions';
import { formatDateTime } from '../shared/format';
import { PortalStyles } from '../shared/PortalStyles';
import { readableColumns } from '../shared/readableColumns';
import { EmptyState, ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { UsageChart } from '../shared/UsageChart';
import { PeriodPicker, usePeriod } from './PeriodPicker';
import { counterColumns, type CounterRow } from './usageColumns';
import { daysBetween, seriesBy, totalSeries, totalsBy, windowText } from './usageSeries';

interface ToolRow extends CounterRow {
  server: string;
  tool: string;
}

const toolColumns = readableColumns<ToolRow>([
  {
    id: 'server',
    label: 'Server',
    isRowHeader: true,
    cell: row => <TextCell title={row.server} />,
  },
  { id: 'tool', label: 'Tool', cell: row => <TextCell title={row.tool} /> },
  ...counterColumns<ToolRow>(),
]);

/** My MCP usage. */
export function MyUsagePage() {
  const session = useDecision(mcpBrokerSessionCreatePermission);
  const [days, setDays] = usePeriod();
  const broker = useApi(mcpBrokerApiRef);
  const links = useAppLinks();
  const usage = useAsyncData(
    () => (session.allowed ? broker.getMyUsage(days) : Promise.resolve(undefined)),
    [broker, days, session.allowed],
  );
  let body;
  if (session.loading || (usage.loading && usage.value === undefined))
    body = <LoadingState what="your MCP usage" />;
  else if (!session.allowed) {
    body = (
      <ForbiddenState what="your MCP usage" permission={mcpBrokerSessionCreatePermission.name} />
    );
  } else if (usage.error !== undefined) {
    body = <ErrorState title="Your MCP usage could not be loaded" error={usage.error} />;
  } else if (usage.value !== undefined) {
    const { from, to, days: rows, grants } = usage.value;
    const period = daysBetween(from, to);
    body = (
      <Flex direction="column" gap="5">
        <YourPlans grants={grants} />
        {rows.length === 0 ? (
          <EmptyState
            title="No tool calls in this period"
            description={
              <>
                Connect an IDE or agent to the broker (see{' '}
                <Link href={links.mcpTools}>MCP tools</Link>) and your calls are counted here within
                a minute.
              </>
            }
          />
        ) : (
          <>
            <section aria-label="Calls per day">
              <UsageChart
                title={`Your tool calls per day by server, ${from} to ${to}`}
                days={period}
                stacks={seriesBy(
                  rows,
                  period,
                  row => row.server,
                  row => row.calls,
                )}
                line={totalSeries(
                  'Errors and rate-limited',
                  rows,
                  period,
                  row => row.errors + row.rateLimited,
                )}
              />
            </section>
            <section aria-label="Calls per server and tool">
              <Table
                columnConfig={toolColumns}
                data={totalsBy(rows, row => ({ server: row.server, tool: row.tool }))}
                pagination={{ type: 'none' }}
              />
            </section>
          </>
        )}
      </Flex>
    );
  }
  return (
    <Flex direction="column" gap="4" px="5" py="4">
      <PortalStyles />
      <Flex justify="between" align="end" gap="4">
        <Text as="h1" variant="title-medium" weight="bold">
          My MCP usage
        </Text>
        <Box style={{ minWidth: 180 }}>
          <PeriodPicker days={days} onChange={setDays} />
        </Box>
      </Flex>
      <Text color="secondary">
        Days are UTC. Counts are written every half minute or so, so the last calls may take a
        moment to appear.
      </Text>
      {body}
    </Flex>
  );
}

function YourPlans(props: { grants: McpUsageGrant[] }) {
  if (props.grants.length === 0) return null;
  return (
    <section aria-label="Your plans">
      <Text as="h2" variant="title-small" weight="bold">
        Your plans
      </Text>
      <Flex direction="column" gap="3">
        {props.grants.map(grant => (
          <Card key={grant.id}>
            <CardHeader>
              <Text as="h3" variant="body-large" weight="bold">
                {grant.title}: {grant.plan}
              </Text>
              <Text color="secondary">
                MCP {grant.target.kind} {grant.target.name} · approved{' '}
                {formatDateTime(grant.approvedAt)}
                {grant.expiresAt === undefined
                  ? ''
                  : ` · expires ${formatDateTime(grant.expiresAt)}`}
              </Text>
            </CardHeader>
            <CardBody>
              <Flex direction="column" gap="2">
                {grant.limits.map(limit => {
                  const label = `${limit.used.toLocaleString('en')} of ${limit.calls.toLocaleString(
                    'en',
                  )} per ${windowText(limit.windowMs)}${
                    limit.tools === undefined ? '' : ` for ${limit.tools.join(', ')}`
                  }`;
                  return (
                    <Flex key={label} direction="column" gap="1">
                      <meter
                        min={0}
                        max={limit.calls}
                        value={Math.min(limit.used, limit.calls)}
                        aria-label={label}
                        style={{ width: '100%' }}
                      />
                      <Text variant="body-small">
                        {label} · window ends {formatDateTime(limit.windowEndsAt)}
                      </Text>
                    </Flex>
                  );
                })}
                {grant.manage !== undefined && <Link href={grant.manage}>Manage this access</Link>}
              </Flex>
            </CardBody>
          </Card>
        ))}
      </Flex>
    </section>
  );
}
